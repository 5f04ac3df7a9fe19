/**
 * Tails that count failures, through the CLI against the built-in simulator: the summary's
 * `tails_with_failures` and the console block, read beside the records of `profile_export.jsonl`.
 * Injected 500s make percentiles beyond the successes null and the block lead the console; a
 * duration cut-off censors the requests it ends (not failures), while the client's own
 * `--request-cancellation-rate` cancellations are failures; a run without failures gives the
 * successes' own nearest-rank percentiles and no block.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Tail {
  unit: string;
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
}

interface Summary {
  tails_with_failures: {
    requests: number;
    failed: number;
    cancelled: number;
    censored: number;
    method: string;
    time_to_first_token: Tail | null;
    request_latency: Tail | null;
  };
  request_latency: { p50: number; p90: number; p95: number; p99: number };
  duration_cutoff?: { cancelled_after_grace: number };
}

const QUANTILES = [
  ['p50', 0.5],
  ['p90', 0.9],
  ['p95', 0.95],
  ['p99', 0.99],
] as const;

/** Runs `tokenload profile` on a fixed-mode simulator (`sim` options added) and reads what it wrote. */
async function profile(sim: string[], flags: string[]) {
  const dir = join(mkdtempSync(join(tmpdir(), 'tokenload-tails-')), 'run');
  dirs.push(dir);
  const simOptions = ['mode=fixed', 'warmup-ms=0', ...sim].flatMap((o) => ['--simulator-option', o]);
  const args = ['profile', '-m', 'Qwen/Qwen3-0.6B', '--endpoint-type', 'chat', '--streaming', '--simulator'];
  const rest = [
    '--tokenizer',
    'builtin',
    '--isl',
    '16',
    '--random-seed',
    '7',
    '--ui',
    'none',
    '--client-warmup-ms',
    '0',
  ];
  const r = await runCliInProcess([...args, ...simOptions, ...rest, ...flags, '--artifact-dir', dir]);
  assert.equal(r.code, 0, r.stderr);
  const console = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  return { ...readRunArtifacts<Summary>(dir), console };
}

test('30 % injected 500s: failed = error records, p95/p99 beyond every success are null, the block leads the console', async () => {
  const run = await profile(
    ['ttft-ms=2', 'itl-ms=1', 'fault-rate-500=0.3', 'seed=3'],
    ['--osl', '8', '--concurrency', '4', '--request-count', '60'],
  );
  const tails = run.summary.tails_with_failures;
  const errors = run.records.filter((r) => r.error !== null).length;
  assert.ok(errors > 6, `only ${errors} of 60 failed`);
  assert.equal(tails.failed, errors);
  assert.equal(tails.requests, run.records.length);
  assert.equal(tails.censored, 0);
  assert.equal(tails.method, 'kaplan_meier');
  const latency = tails.request_latency;
  assert.ok(latency !== null && latency.p50 !== null);
  assert.ok(
    latency.p50 >= run.summary.request_latency.p50,
    `${latency.p50} < ${run.summary.request_latency.p50}`,
  );
  assert.equal(latency.p95, null);
  assert.equal(latency.p99, null);
  // Without censoring a percentile is among the failures exactly when its share exceeds the successes'.
  const successes = tails.requests - tails.failed;
  for (const [key, q] of QUANTILES) {
    assert.equal(latency[key] === null, q * tails.requests > successes, key);
    assert.equal(tails.time_to_first_token?.[key] === null, q * tails.requests > successes, `TTFT ${key}`);
  }
  const lead = run.console.indexOf('tokenload | Tails Counting Failures');
  assert.ok(lead >= 0 && lead < run.console.indexOf('tokenload | LLM Metrics'), run.console);
  assert.match(
    run.console,
    /of requests failed \(\d+ of 60\): p95 request latency counting failures is failed; the table below is over successes only\./,
  );
});

test('a duration cut-off censors the requests it ends; a --request-cancellation-rate cancellation is a failure', async () => {
  const run = await profile(
    ['ttft-ms=20', 'itl-ms=10'],
    [
      '--osl',
      '30',
      '--concurrency',
      '4',
      '--benchmark-duration',
      '1',
      '--benchmark-grace-period',
      '0',
      '--request-cancellation-rate',
      '20',
      '--request-cancellation-delay',
      '0.1',
    ],
  );
  const tails = run.summary.tails_with_failures;
  const censored = run.records.filter((r) => r.metadata.censored === true);
  assert.ok(censored.length > 0, 'no request was in flight at the cut-off');
  assert.equal(tails.censored, censored.length);
  assert.equal(tails.censored, run.summary.duration_cutoff?.cancelled_after_grace);
  for (const r of censored) assert.equal(r.metadata.was_cancelled, true);
  // Cancelled 0.1 s after the send, after the 20 ms first token: a failure that keeps its TTFT.
  const ownCancels = run.records.filter(
    (r) => r.metadata.was_cancelled === true && r.metadata.censored !== true,
  );
  assert.ok(ownCancels.length > 0, 'the cancellation rate cancelled nothing');
  assert.equal(tails.failed, ownCancels.length);
  assert.equal(tails.cancelled, ownCancels.length);
  for (const r of ownCancels) assert.ok((r.metrics.error_time_to_first_token?.value ?? 0) >= 20);
  assert.equal(tails.requests, run.records.length);
  const latency = tails.request_latency;
  assert.ok(latency !== null && latency.p50 !== null, JSON.stringify(tails));
  assert.ok(latency.p50 >= run.summary.request_latency.p50);
  const ttft = tails.time_to_first_token;
  assert.ok(ttft !== null && ttft.p50 !== null && ttft.p90 !== null, JSON.stringify(tails));
});

test('no failures: each percentile is a success latency next to the usual one; no console block', async () => {
  const run = await profile(
    ['ttft-ms=5', 'itl-ms=2'],
    ['--osl', '6', '--concurrency', '2', '--request-count', '20'],
  );
  const tails = run.summary.tails_with_failures;
  assert.deepEqual([tails.failed, tails.censored, tails.requests], [0, 0, 20]);
  const latencies = run.records.map((r) => r.metrics.request_latency?.value as number);
  for (const [key] of QUANTILES) {
    const km = tails.request_latency?.[key];
    assert.ok(
      km !== null && km !== undefined && latencies.includes(km),
      `${key} ${km} is no record's latency`,
    );
    // A step function beside an interpolation: no success lies strictly between the two.
    const usual = run.summary.request_latency[key];
    const [lo, hi] = [Math.min(km, usual), Math.max(km, usual)];
    assert.ok(!latencies.some((v) => v > lo && v < hi), `${key}: a latency between ${km} and ${usual}`);
  }
  assert.ok(!run.console.includes('Tails Counting Failures'), run.console);
});
