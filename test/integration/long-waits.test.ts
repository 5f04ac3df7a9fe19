/**
 * Waits longer than one Node timer holds (2^31 − 1 ms, about 24.8 days) in the built CLI: a trace
 * whose timestamps jump by 35 days, and turn delays of 31 years. Found by a new user: such a wait
 * flooded stderr with Node's TimeoutOverflowWarning (a timer of 1 ms, re-armed forever) and the run
 * never ended. Each run here ends at its --benchmark-duration, prints no Node warning, and the client
 * warm-up (a closed loop without the run's delays) ends on time too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliProcess } from '../helpers/cli-process.js';

const TRACE = 'examples/traces/bailian_traceA_stratified_head24.jsonl';
/** Hang guard: each run stops after 3 s of benchmark, well inside this. */
const TEST_TIMEOUT_MS = 60_000;
/**
 * The simulator's own warm-up (1 s of CPU while the CLI loads its tokenizer) is off: these runs check
 * the client's waits, and the client warm-up stays on (it is part of what must end on time).
 */
const QUICK_SIMULATOR = ['--simulator-option', 'warmup-ms=0'];

function requestCount(dir: string): number {
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
    request_count?: { avg: number };
  };
  return summary.request_count?.avg ?? 0;
}

test('a trace whose third row comes 35 days later: the replay stops at --benchmark-duration, no timer warning', {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const work = mkdtempSync(join(tmpdir(), 'tokenload-long-wait-'));
  const rows = readFileSync(TRACE, 'utf8').trim().split('\n').slice(0, 3);
  const third = JSON.parse(rows[2] ?? '{}') as Record<string, unknown>;
  third.timestamp = 35 * 86_400;
  const trace = join(work, 'gap.jsonl');
  writeFileSync(trace, `${rows[0]}\n${rows[1]}\n${JSON.stringify(third)}\n`);
  const dir = join(work, 'run');
  const r = await runCliProcess([
    ...['profile', '--model', 'Qwen/Qwen3-0.6B', '--streaming', '--simulator'],
    ...['--input-file', trace, '--custom-dataset-type', 'bailian_trace', '--fixed-schedule'],
    ...['--benchmark-duration', '3', '--artifact-dir', dir],
    ...QUICK_SIMULATOR,
    // The warm-up ran to its cap here (5 s of a busy core): a 1 s cap ends it the same way.
    ...['--client-warmup-ms', '1000'],
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /TimeoutOverflowWarning/);
  assert.equal(requestCount(dir), 2);
});

test('turn delays of 31 years: the sessions stop at --benchmark-duration, no timer warning', {
  timeout: TEST_TIMEOUT_MS,
}, async () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'tokenload-long-delay-')), 'run');
  const r = await runCliProcess([
    ...['profile', '--model', 'Qwen/Qwen3-0.6B', '--streaming', '--simulator', '--concurrency', '2'],
    ...['--conversation-num', '4', '--conversation-turn-mean', '3', '--conversation-turn-delay-mean', '1e12'],
    ...['--benchmark-duration', '3', '--artifact-dir', dir],
    ...QUICK_SIMULATOR,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /TimeoutOverflowWarning/);
  // Each slot sent its session's first turn, then waited for a second turn the duration cut short.
  assert.equal(requestCount(dir), 2);
  assert.match(r.stderr, /client warm-up: \d+ requests/);
});
