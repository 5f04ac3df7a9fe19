/**
 * Verbatim replay of recorded request bodies (AIPerf's `inputs_json` and `raw_payload` dataset
 * types, docs tutorials/inputs-json-replay.md and raw-payload-replay.md), through the CLI against
 * simulators that keep the bodies they received. A user checks that each server got exactly the
 * bodies of the file (model, `stream` and `max_tokens` as written, not `--model` / `--streaming`),
 * sessions whole and in turn order, and the records' counts, ids and requested tokens.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
type Body = Record<string, unknown>;

let simA: RunningSimulator;
let simB: RunningSimulator;
let work = '';

before(async () => {
  const sim = { mode: 'fixed' as const, ttftMs: 1, itlMs: 0, models: [MODEL, 'other/model'] };
  [simA, simB] = await Promise.all([
    startSimulator(sim, { captureRequests: true }),
    startSimulator(sim, { captureRequests: true }),
  ]);
  work = mkdtempSync(join(tmpdir(), 'tokenload-payloads-'));
});
after(async () => {
  await Promise.all([simA?.close(), simB?.close()]);
});

function freshDir(name: string): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Bodies each simulator received from index `from` on, parsed. */
function received(sim: RunningSimulator, from = 0): Body[] {
  return sim
    .capturedRequests()
    .slice(from)
    .map((r) => JSON.parse(r.body) as Body);
}

/** Runs `tokenload profile …` in this process; fails the test on a non-zero exit. */
async function profile(args: string[]): Promise<string> {
  const r = await runCliInProcess(['profile', '--client-warmup-ms', '0', '--ui', 'none', ...args]);
  assert.equal(r.code, 0, r.stderr);
  return r.stderr;
}

const chat = (content: string, extra: Body = {}): Body => ({
  messages: [{ role: 'user', content }],
  model: MODEL,
  ...extra,
});

test('inputs_json: each payload sent as written to two --url, sessions whole, ids and turn order kept', async () => {
  const history = [
    { role: 'user', content: 'Hello' },
    { role: 'assistant', content: 'Hi there!' },
    { role: 'user', content: 'How are you?' },
  ];
  const sessions = [
    {
      session_id: 'session-001',
      payloads: [
        chat('Hello', { max_tokens: 7, stream: true }),
        { messages: history, model: MODEL, max_tokens: 7, stream: true, temperature: 0.3 },
      ],
    },
    // Another model name and no `stream`: sent so, although the run says --model and --streaming.
    {
      session_id: 'session-002',
      payloads: [chat('Explain REST APIs.', { model: 'other/model', max_tokens: 4 })],
    },
    {
      session_id: 'session-003',
      payloads: [chat('What is Python?', { max_completion_tokens: 5, stream: true })],
    },
  ];
  const dir = freshDir('inputs-json');
  const file = join(dir, 'inputs.json');
  // Pretty-printed, as AIPerf writes it.
  writeFileSync(file, JSON.stringify({ data: sessions }, null, 2));
  const fromA = simA.capturedRequests().length;
  const fromB = simB.capturedRequests().length;
  const out = join(dir, 'run');
  await profile([
    '--input-file',
    file,
    '--model',
    MODEL,
    '--custom-dataset-type',
    'inputs_json',
    '--streaming',
    '--url',
    simA.url,
    '--url',
    simB.url,
    '--concurrency',
    '4',
    '--artifact-dir',
    out,
  ]);
  const { records } = readRunArtifacts(out);
  assert.equal(records.length, 4);
  assert.ok(records.every((r) => r.error === null));
  const byId = new Map(sessions.map((s) => [s.session_id, s.payloads]));
  // Every record names a session of the file and its turn; each server received exactly its sessions' bodies.
  const sent = new Map<string, Body[]>([
    [simA.url, received(simA, fromA)],
    [simB.url, received(simB, fromB)],
  ]);
  for (const [url, bodies] of sent) {
    const expected = records
      .filter((r) => r.metadata.server_url === url)
      .map((r) => byId.get(String(r.metadata.conversation_id))?.[r.metadata.turn_index]);
    assert.deepEqual(
      new Set(bodies.map((b) => JSON.stringify(b))),
      new Set(expected.map((b) => JSON.stringify(b))),
    );
  }
  assert.equal(sent.get(simA.url)?.length, 3); // session-001 (2 turns) and session-003, round-robin
  for (const r of records) {
    const body = byId.get(String(r.metadata.conversation_id))?.[r.metadata.turn_index] as Body;
    assert.equal(r.metadata.requested_output_tokens, body.max_tokens ?? body.max_completion_tokens);
    assert.equal(r.metadata.response_streamed, body.stream === true);
  }
  // The second turn carries its history as written: its ISL counts every message sent.
  const turns = records.filter((r) => r.metadata.conversation_id === 'session-001');
  const isl = (t: number) =>
    turns.find((r) => r.metadata.turn_index === t)?.metrics.input_sequence_length?.value;
  assert.ok((isl(1) ?? 0) > (isl(0) ?? 0), `turn 1 ISL ${isl(1)} vs turn 0 ${isl(0)}`);
});

test('inputs_json: the inputs.json of a tokenload run replays to the very bodies it lists', async () => {
  const first = freshDir('round-trip-1');
  await profile([
    '-m',
    MODEL,
    '--url',
    simA.url,
    '--streaming',
    '--num-dataset-entries',
    '3',
    '--session-turns-mean',
    '2',
    '--session-turns-stddev',
    '0',
    '--isl',
    '20',
    '--osl',
    '3',
    '--concurrency',
    '2',
    '--artifact-dir',
    first,
  ]);
  const listed = JSON.parse(readFileSync(join(first, 'inputs.json'), 'utf8')) as {
    data: Array<{ session_id: string; payloads: Body[] }>;
  };
  const from = simB.capturedRequests().length;
  const second = freshDir('round-trip-2');
  await profile([
    '--input-file',
    join(first, 'inputs.json'),
    '-m',
    MODEL,
    '--custom-dataset-type',
    'inputs_json',
    '--url',
    simB.url,
    '--concurrency',
    '2',
    '--artifact-dir',
    second,
  ]);
  const expected = listed.data.flatMap((s) => s.payloads.map((p) => JSON.stringify(p)));
  assert.deepEqual(
    received(simB, from)
      .map((b) => JSON.stringify(b))
      .sort(),
    [...expected].sort(),
  );
  const { records } = readRunArtifacts(second);
  assert.equal(records.length, expected.length);
  assert.deepEqual(
    new Set(records.map((r) => r.metadata.conversation_id)),
    new Set(listed.data.map((s) => s.session_id)),
  );
});

const RAW_LINES = [
  chat('What is machine learning?', { max_tokens: 100 }),
  chat('Explain neural networks.', { max_tokens: 200 }),
  chat('How does backpropagation work?', { max_tokens: 150 }),
];

test('raw_payload file: one single-turn conversation per line, bodies as written', async () => {
  const dir = freshDir('raw-file');
  const file = join(dir, 'payloads.jsonl');
  writeFileSync(file, `${RAW_LINES.map((l) => JSON.stringify(l)).join('\n')}\n\n`);
  const from = simA.capturedRequests().length;
  const out = join(dir, 'run');
  await profile([
    '--input-file',
    file,
    '--model',
    MODEL,
    '--custom-dataset-type',
    'raw_payload',
    '--streaming',
    '--url',
    simA.url,
    '--concurrency',
    '2',
    '--artifact-dir',
    out,
  ]);
  assert.deepEqual(
    received(simA, from)
      .map((b) => JSON.stringify(b))
      .sort(),
    RAW_LINES.map((b) => JSON.stringify(b)).sort(),
  );
  const { records } = readRunArtifacts(out);
  assert.equal(records.length, 3);
  assert.deepEqual(records.map((r) => r.metadata.requested_output_tokens).sort(), [100, 150, 200]);
  // No `stream` in the bodies: answered as one JSON body although the run says --streaming.
  assert.ok(records.every((r) => r.error === null && r.metadata.response_streamed === false));
});

test('raw_payload folder: each *.jsonl file one conversation (by name), its lines the turns in order', async () => {
  const dir = freshDir('raw-folder');
  const folder = join(dir, 'conversations');
  mkdirSync(folder);
  const s1 = [
    chat('What is Python?', { max_tokens: 20, stream: true }),
    {
      messages: [
        { role: 'user', content: 'What is Python?' },
        { role: 'assistant', content: 'Python is a programming language.' },
        { role: 'user', content: 'Show me a hello world example.' },
      ],
      model: MODEL,
      max_tokens: 20,
      stream: true,
    },
  ];
  const s2 = [chat('Explain REST APIs.', { max_tokens: 30, stream: true })];
  writeFileSync(join(folder, 'session_002.jsonl'), `${s2.map((l) => JSON.stringify(l)).join('\n')}\n`);
  writeFileSync(join(folder, 'session_001.jsonl'), `${s1.map((l) => JSON.stringify(l)).join('\n')}\n`);
  writeFileSync(join(folder, 'notes.txt'), 'not a conversation');
  const from = simA.capturedRequests().length;
  const out = join(dir, 'run');
  await profile([
    '--input-file',
    folder,
    '--model',
    MODEL,
    '--custom-dataset-type',
    'raw_payload',
    '--streaming',
    '--url',
    simA.url,
    '--concurrency',
    '1',
    '--artifact-dir',
    out,
  ]);
  // Concurrency 1, sequential sampling: files in name order, turns in line order.
  assert.deepEqual(
    received(simA, from).map((b) => JSON.stringify(b)),
    [...s1, ...s2].map((b) => JSON.stringify(b)),
  );
  const { records } = readRunArtifacts(out);
  assert.deepEqual(
    records.map((r) => `${r.metadata.conversation_id}:${r.metadata.turn_index}`),
    ['session_001:0', 'session_001:1', 'session_002:0'],
  );
  assert.ok(records.every((r) => r.error === null && r.metadata.response_streamed === true));
});

test('raw_payload detected without --custom-dataset-type (the doc second command); the log names it', async () => {
  const dir = freshDir('raw-detected');
  const file = join(dir, 'payloads.jsonl');
  writeFileSync(file, `${RAW_LINES.map((l) => JSON.stringify(l)).join('\n')}\n`);
  const from = simA.capturedRequests().length;
  const out = join(dir, 'run');
  const stderr = await profile([
    '--input-file',
    file,
    '--model',
    MODEL,
    '--streaming',
    '--url',
    simA.url,
    '--concurrency',
    '2',
    '--artifact-dir',
    out,
  ]);
  assert.match(stderr, /dataset type raw_payload \(detected; --custom-dataset-type not given\)/);
  assert.equal(received(simA, from).length, 3);
  assert.equal(readRunArtifacts(out).records.length, 3);
});

test('a file whose rows fit two types is refused before anything is sent (exit 2), naming file and line', async () => {
  const dir = freshDir('ambiguous');
  const file = join(dir, 'messages.jsonl');
  writeFileSync(file, `${JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] })}\n`);
  const from = simA.capturedRequests().length;
  const r = await runCliInProcess([
    'profile',
    '--input-file',
    file,
    '-m',
    MODEL,
    '--url',
    simA.url,
    '--ui',
    'none',
    '--artifact-dir',
    join(dir, 'run'),
  ]);
  assert.equal(r.code, 2);
  assert.ok(r.stderr.includes(`${file}:1: cannot tell the dataset type`), r.stderr);
  assert.match(r.stderr, /mooncake_trace and raw_payload/);
  assert.equal(simA.capturedRequests().length, from);
});
