/**
 * `--system-prompt` / `--system-prompt-file` (AIPerf's custom-dataset tutorial, "Adding a System
 * Prompt"), through the CLI against the simulator: the exact text is one system message on every
 * request, with synthetic data and with files; a dataset's own system message gets it prepended; the
 * Responses API carries it in `instructions`, Messages in `system`; the tokens add to the prompt's;
 * and what cannot work is refused before anything is sent.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const SYSTEM = 'You are a terse assistant. Answer in one sentence.';
let sim: RunningSimulator;
let work = '';

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  work = mkdtempSync(join(tmpdir(), 'tokenload-system-'));
});
after(async () => {
  await sim?.close();
});

function file(name: string, rows: unknown[]): string {
  const path = join(work, name);
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return path;
}

const COMMON = ['-m', MODEL, '--client-warmup-ms', '0', '--ui', 'none', '--tokenizer', 'builtin'];

/** Runs `profile` against the simulator; returns the records and the bodies the simulator got. */
async function profile(
  name: string,
  args: string[],
): Promise<{ records: ExportedRecord[]; bodies: Array<Record<string, unknown>> }> {
  const dir = join(work, name);
  const seen = sim.capturedRequests().length;
  const r = await runCliInProcess(['profile', ...COMMON, '--url', sim.url, '--artifact-dir', dir, ...args]);
  assert.equal(r.code, 0, r.stderr);
  const bodies = sim
    .capturedRequests()
    .slice(seen)
    .filter((c) => c.path !== '/v1/models')
    .map((c) => JSON.parse(c.body) as Record<string, unknown>);
  return { records: readRunArtifacts(dir).records, bodies };
}

async function refused(args: string[]): Promise<string> {
  const seen = sim.capturedRequests().length;
  const r = await runCliInProcess([
    'profile',
    ...COMMON,
    '--url',
    sim.url,
    '--artifact-dir',
    join(work, 'x'),
    ...args,
  ]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(sim.capturedRequests().length, seen, 'nothing was sent');
  return r.stderr;
}

/** The roles of a chat body's messages, in order. */
const roles = (body: Record<string, unknown> | undefined): string[] =>
  ((body?.messages ?? []) as Array<{ role: string }>).map((m) => m.role);
const isl = (r: ExportedRecord): unknown => r.metrics.input_sequence_length?.value;

test('synthetic chat: the text is one system message on every request, its tokens added to --isl', async () => {
  const plain = await profile('synthetic-plain', [
    '--isl',
    '40',
    '--request-count',
    '3',
    '--random-seed',
    '7',
  ]);
  const { records, bodies } = await profile('synthetic-system', [
    '--isl',
    '40',
    '--request-count',
    '3',
    '--random-seed',
    '7',
    '--system-prompt',
    SYSTEM,
  ]);
  assert.equal(bodies.length, 3);
  for (const body of bodies) {
    const messages = body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(messages[0], { role: 'system', content: SYSTEM });
    assert.deepEqual(
      messages.map((m) => m.role),
      ['system', 'user'],
    );
  }
  assert.equal(records.length, 3);
  for (const r of plain.records) assert.equal(isl(r), 40);
  // The user prompt keeps --isl; every request carries the same system tokens on top.
  const added = new Set(records.map((r) => (isl(r) as number) - 40));
  assert.equal(added.size, 1);
  assert.ok([...added][0]! > 0, `added ${[...added]}`);
});

test('--system-prompt-file: the file text as written, with a single_turn file', async () => {
  const text = 'Line one of the production prompt.\nLine two.\n';
  const promptFile = join(work, 'prod_system.txt');
  writeFileSync(promptFile, text);
  const input = file('data.jsonl', [
    { text: 'What is machine learning?' },
    { text: 'Explain neural networks.' },
  ]);
  const args = ['--input-file', input, '--custom-dataset-type', 'single_turn', '--conversation-num', '2'];
  const plain = await profile('file-plain', args);
  const { records, bodies } = await profile('file-system', [...args, '--system-prompt-file', promptFile]);
  assert.deepEqual(
    bodies.map((b) => b.messages),
    [
      [
        { role: 'system', content: text },
        { role: 'user', content: 'What is machine learning?' },
      ],
      [
        { role: 'system', content: text },
        { role: 'user', content: 'Explain neural networks.' },
      ],
    ],
  );
  // Each row's ISL grows by the same amount: the system message's tokens.
  const grown = records.map(
    (r, i) => (isl(r) as number) - (isl(plain.records[i] as ExportedRecord) as number),
  );
  assert.equal(new Set(grown).size, 1);
  assert.ok((grown[0] as number) > 0);
});

test("multi_turn: prepended to the dataset's own system message, one system message on every turn", async () => {
  const input = file('conv.jsonl', [
    {
      session_id: 'chat_1',
      turns: [
        { role: 'system', text: 'Answer in French.' },
        { text: 'What is machine learning?' },
        { text: 'Give me an example.' },
      ],
    },
  ]);
  const { records, bodies } = await profile('multi-system', [
    '--input-file',
    input,
    '--custom-dataset-type',
    'multi_turn',
    '--conversation-num',
    '1',
    '--system-prompt',
    SYSTEM,
  ]);
  assert.equal(bodies.length, 2);
  for (const body of bodies) {
    const messages = body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(messages[0], { role: 'system', content: `${SYSTEM}\n\nAnswer in French.` });
    assert.equal(messages.filter((m) => m.role === 'system').length, 1);
  }
  assert.deepEqual(roles(bodies[1]), ['system', 'user', 'assistant', 'user']);
  assert.equal(records.length, 2);
});

test('responses: the text goes into instructions; messages: into the top-level system', async () => {
  const input = file('one.jsonl', [{ text: 'What is machine learning?' }]);
  const args = ['--input-file', input, '--custom-dataset-type', 'single_turn', '--conversation-num', '1'];
  const responses = await profile('responses-system', [
    ...args,
    '--endpoint-type',
    'responses',
    '--system-prompt',
    SYSTEM,
  ]);
  assert.equal(responses.bodies[0]?.instructions, SYSTEM);
  assert.deepEqual(responses.bodies[0]?.input, [{ role: 'user', content: 'What is machine learning?' }]);
  const messages = await profile('messages-system', [
    ...args,
    '--endpoint-type',
    'messages',
    '--system-prompt',
    SYSTEM,
  ]);
  assert.equal(messages.bodies[0]?.system, SYSTEM);
  assert.deepEqual(messages.bodies[0]?.messages, [{ role: 'user', content: 'What is machine learning?' }]);
});

test('refused before anything is sent: no system role, a verbatim dataset, a slot taken twice', async () => {
  assert.match(
    await refused(['--endpoint-type', 'completions', '--system-prompt', SYSTEM, '--request-count', '1']),
    /--endpoint-type completions has no system role/,
  );
  const bodies = file('bodies.jsonl', [{ messages: [{ role: 'user', content: 'hi' }] }]);
  assert.match(
    await refused([
      '--input-file',
      bodies,
      '--custom-dataset-type',
      'raw_payload',
      '--system-prompt',
      SYSTEM,
    ]),
    /raw_payload sends each request body as written/,
  );
  assert.match(
    await refused(['--shared-system-prompt-length', '100', '--system-prompt', SYSTEM]),
    /cannot be combined with --shared-system-prompt-length/,
  );
  assert.match(
    await refused(['--num-prefix-prompts', '3', '--system-prompt', SYSTEM]),
    /cannot be combined with --num-prefix-prompts/,
  );
  assert.match(
    await refused(['--system-prompt', SYSTEM, '--system-prompt-file', 'x.txt']),
    /give one of them/,
  );
});

test('a missing --system-prompt-file stops the run before anything is sent, naming the path', async () => {
  const seen = sim.capturedRequests().length;
  const missing = join(work, 'no-such-prompt.txt');
  const r = await runCliInProcess([
    'profile',
    ...COMMON,
    '--url',
    sim.url,
    '--artifact-dir',
    join(work, 'missing'),
    '--request-count',
    '1',
    '--system-prompt-file',
    missing,
  ]);
  assert.notEqual(r.code, 0);
  assert.ok(r.stderr.includes(missing), r.stderr);
  assert.equal(sim.capturedRequests().length, seen);
});
