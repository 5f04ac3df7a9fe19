/**
 * A `mooncake_trace` whose rows have no `timestamp` (AIPerf's custom-prompt-benchmarking tutorial:
 * `text_input` rows, `--concurrency 2`): the fixed schedule the dataset type implies is dropped, one
 * log line says so, and the rows are sent by concurrency, each once, as AIPerf sends them. An explicit
 * `--fixed-schedule` stays an error naming the file and line. Through the CLI against the simulator.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const QUERIES = [
  { text_input: 'What is the capital of France?', output_length: 20 },
  { text_input: 'Explain quantum computing in simple terms.', output_length: 100 },
  { text_input: 'Write a Python function to calculate fibonacci numbers.', output_length: 150 },
  { text_input: 'Summarize the main causes of World War II.', output_length: 200 },
  { text_input: 'How do neural networks learn?', output_length: 80 },
];
let sim: RunningSimulator;
let work = '';
let input = '';

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  work = mkdtempSync(join(tmpdir(), 'tokenload-untimed-'));
  input = join(work, 'production_queries.jsonl');
  writeFileSync(input, `${QUERIES.map((q) => JSON.stringify(q)).join('\n')}\n`);
});
after(async () => {
  await sim?.close();
});

const args = (dir: string, extra: string[]): string[] => [
  'profile',
  '--model',
  MODEL,
  '--endpoint-type',
  'chat',
  '--endpoint',
  '/v1/chat/completions',
  '--streaming',
  '--url',
  sim.url,
  '--input-file',
  input,
  '--custom-dataset-type',
  'mooncake_trace',
  '--tokenizer',
  'builtin',
  '--client-warmup-ms',
  '0',
  '--ui',
  'none',
  '--artifact-dir',
  join(work, dir),
  ...extra,
];

test("the tutorial's command: no timestamps, so each row is sent once by --concurrency 2", async () => {
  const seen = sim.capturedRequests().length;
  const r = await runCliInProcess(args('doc', ['--concurrency', '2', '--warmup-request-count', '1']));
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr.match(/no row has a timestamp/g)?.length, 1, r.stderr);
  assert.match(r.stderr, /profiling: concurrency 2/);
  const { records, summary } = readRunArtifacts<{ request_count: { avg: number } }>(join(work, 'doc'));
  assert.equal(records.length, QUERIES.length);
  assert.equal(summary.request_count.avg, QUERIES.length);
  // The profiling phase's bodies (after the one warmup request): every row's text exactly once.
  const texts = sim
    .capturedRequests()
    .slice(seen)
    .filter((c) => c.path === '/v1/chat/completions')
    .map((c) => (JSON.parse(c.body) as { messages: Array<{ content: string }> }).messages[0]?.content);
  assert.equal(texts.length, QUERIES.length + 1);
  assert.deepEqual([...texts.slice(1)].sort(), QUERIES.map((q) => q.text_input).sort());
  assert.deepEqual(
    records.map((rec) => rec.metadata.requested_output_tokens).sort((a, b) => Number(a) - Number(b)),
    QUERIES.map((q) => q.output_length).sort((a, b) => a - b),
  );
});

test('an explicit --fixed-schedule with rows without timestamps stays an error naming file and line', async () => {
  const r = await runCliInProcess(args('fixed', ['--fixed-schedule', '--no-trace-streaming']));
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /production_queries\.jsonl:1/);
  assert.doesNotMatch(r.stderr, /no row has a timestamp/);
});
