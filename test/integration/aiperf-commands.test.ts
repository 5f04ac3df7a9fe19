/**
 * AIPerf's commands as its docs print them (docs/tutorials/multi-turn.md, custom-dataset.md,
 * docs/cli-options.md), with only `aiperf` replaced and `--url` pointed at the simulator, through the
 * CLI: `--conversation-num` is the number of sessions, each runs all its turns, and the run ends
 * when they complete ("10 conversations × 3 turns = 30 requests"); a later turn's ISL counts the
 * history it re-sends, as AIPerf counts it; files and goodput SLOs as AIPerf takes them. The runs
 * add `--client-warmup-ms 0`: every assertion reads counts, turns and token lengths, none a time.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0.2 });
});
after(async () => {
  await sim.close();
});

interface Summary {
  request_count: { avg: number };
  good_request_count?: { avg: number };
  warnings: string[];
}

/** Runs an AIPerf doc command (its flags after `aiperf profile`) against the simulator. */
async function aiperfCommand(flags: string[]): Promise<{ records: ExportedRecord[]; summary: Summary }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-aiperf-mt-'));
  const args = [
    'profile',
    ...flags,
    '--url',
    sim.url,
    '--artifact-dir',
    dir,
    '--ui',
    'none',
    '--no-server-metrics',
    '--client-warmup-ms',
    '0',
  ];
  const exit = await runCliInProcess(args);
  assert.equal(exit.code, 0, exit.stderr);
  return readRunArtifacts<Summary>(dir);
}

/** Turns per session id, from the records. */
function turnsPerSession(records: readonly ExportedRecord[]): Map<string, number[]> {
  const sessions = new Map<string, number[]>();
  for (const r of records) {
    const id = String(r.metadata.conversation_id);
    sessions.set(id, [...(sessions.get(id) ?? []), r.metadata.turn_index]);
  }
  return sessions;
}

const value = (r: ExportedRecord, tag: string): number => {
  const m = r.metrics[tag];
  assert.ok(m !== undefined, `${tag} missing`);
  return m.value;
};

const CHAT = [
  '--model',
  'Qwen/Qwen3-0.6B',
  '--endpoint-type',
  'chat',
  '--endpoint',
  '/v1/chat/completions',
  '--streaming',
];

test('multi-turn.md "Fixed-Length Conversations": 10 conversations × 3 turns = 30 requests, ISL counts the history', async () => {
  const run = await aiperfCommand([
    ...CHAT,
    ...['--conversation-num', '10', '--conversation-turn-mean', '3', '--conversation-turn-stddev', '0'],
    ...['--synthetic-input-tokens-mean', '200', '--output-tokens-mean', '150', '--concurrency', '2'],
    ...['--random-seed', '42'],
  ]);
  assert.equal(run.records.length, 30);
  assert.equal(run.summary.request_count.avg, 30);
  const sessions = turnsPerSession(run.records);
  assert.equal(sessions.size, 10);
  for (const turns of sessions.values()) assert.deepEqual([...turns].sort(), [0, 1, 2]);
  // Each turn re-sends the history: its ISL is the previous turn's ISL + that turn's output + its own
  // prompt (AIPerf's doc: "Turn 5: ~300 + (4 × 250)"), and the turn's own share stays --isl.
  for (const id of sessions.keys()) {
    const turns = run.records
      .filter((r) => r.metadata.conversation_id === id)
      .sort((a, b) => a.metadata.turn_index - b.metadata.turn_index);
    for (let k = 1; k < turns.length; k++) {
      const prev = turns[k - 1] as ExportedRecord;
      const cur = turns[k] as ExportedRecord;
      assert.equal(value(cur, 'turn_input_sequence_length'), 200);
      assert.equal(
        value(cur, 'input_sequence_length'),
        value(prev, 'input_sequence_length') + value(prev, 'output_sequence_length') + 200,
      );
    }
  }
});

test('multi-turn.md "Request Rate with Multi-Turn": 30 conversations × 4 turns at a rate, all sessions complete', async () => {
  const run = await aiperfCommand([
    ...CHAT,
    ...['--conversation-num', '30', '--conversation-turn-mean', '4'],
    // The doc's rate is 5/s (24 s); a faster one keeps the test short and changes no count.
    ...['--request-rate', '100', '--request-rate-mode', 'poisson'],
    ...['--synthetic-input-tokens-mean', '200', '--output-tokens-mean', '15', '--random-seed', '42'],
  ]);
  assert.equal(run.records.length, 120);
  const sessions = turnsPerSession(run.records);
  assert.equal(sessions.size, 30);
  for (const turns of sessions.values()) assert.equal(turns.length, 4);
});

test('--conversation-num with --request-count stops at whichever comes first', async () => {
  const flags = [...CHAT, '--conversation-turn-mean', '3', '--isl', '20', '--osl', '5', '--concurrency', '2'];
  const byCount = await aiperfCommand([...flags, '--conversation-num', '10', '--request-count', '7']);
  assert.equal(byCount.records.length, 7);
  const bySessions = await aiperfCommand([...flags, '--conversation-num', '2', '--request-count', '50']);
  assert.equal(bySessions.records.length, 6);
  // --request-count with --benchmark-duration: AIPerf stops at whichever comes first, so does this.
  const countFirst = await aiperfCommand([...flags, '--request-count', '5', '--benchmark-duration', '60']);
  assert.equal(countFirst.records.length, 5);
});

test('custom-dataset.md random pool: --num-conversations 50 sends 50 requests drawn from an 8-line pool', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-random-pool-'));
  const pool = join(dir, 'pool.jsonl');
  const texts = [
    'machine learning',
    'neural networks',
    'backpropagation',
    'transformers',
    'RL',
    'transfer',
    'SGD',
    'GANs',
  ];
  writeFileSync(pool, `${texts.map((t) => JSON.stringify({ text: `What is ${t}?` })).join('\n')}\n`);
  const flags = ['--model', 'Qwen/Qwen3-0.6B', '--endpoint-type', 'chat', '--input-file', pool];
  const run = await aiperfCommand([
    ...flags,
    ...[
      '--custom-dataset-type',
      'random_pool',
      '--num-conversations',
      '50',
      '--streaming',
      '--concurrency',
      '4',
    ],
    ...['--random-seed', '42'],
  ]);
  assert.equal(run.records.length, 50);
  // AIPerf's default for a random pool with no count: 100 conversations.
  const byDefault = await aiperfCommand([
    ...flags,
    '--custom-dataset-type',
    'random_pool',
    '--concurrency',
    '4',
  ]);
  assert.equal(byDefault.records.length, 100);
});

test('custom-dataset.md single_turn and multi_turn files: AIPerf default count, max(10, 2 × concurrency)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-aiperf-files-'));
  const prompts = join(dir, 'prompts.jsonl');
  writeFileSync(
    prompts,
    `${['a', 'b', 'c', 'd', 'e'].map((t) => JSON.stringify({ text: `What is ${t}?` })).join('\n')}\n`,
  );
  const conversations = join(dir, 'conversations.jsonl');
  const sessions = [
    { session_id: 'chat_1', turns: [{ text: 'one' }, { text: 'two' }] },
    { session_id: 'chat_2', turns: [{ text: 'three' }, { text: 'four' }, { text: 'five' }] },
  ];
  writeFileSync(conversations, `${sessions.map((s) => JSON.stringify(s)).join('\n')}\n`);
  for (const [file, type] of [
    [prompts, 'single_turn'],
    [conversations, 'multi_turn'],
  ] as const) {
    const run = await aiperfCommand([
      ...['--model', 'Qwen/Qwen3-0.6B', '--endpoint-type', 'chat', '--input-file', file],
      ...['--custom-dataset-type', type, '--streaming', '--concurrency', '2'],
    ]);
    assert.equal(run.records.length, 10, type);
  }
});

test('cli-options.md goodput without --streaming: the ITL SLO is left out with a warning, goodput judged on latency', async () => {
  const run = await aiperfCommand([
    ...['--model', 'Qwen/Qwen3-0.6B', '--goodput', 'request_latency:250 inter_token_latency:10'],
  ]);
  assert.equal(run.records.length, 10);
  // Every request of the 1 ms simulator meets request_latency:250; none could have met an ITL SLO it
  // does not measure, so a goodput of 10 shows the ITL SLO was left out, not failed.
  assert.equal(run.summary.good_request_count?.avg, 10);
  assert.ok(
    run.summary.warnings.some((w) =>
      w.startsWith('--goodput inter_token_latency: measured on streamed responses only'),
    ),
    run.summary.warnings.join('\n'),
  );
});
