/**
 * AIPerf's docs/tutorials/warmup.md, its commands run with `aiperf` replaced by `tokenload` against
 * the simulator: the warm-up runs with its own load settings (each defaulting to the profiling
 * phase's), its requests are counted apart from the profiling phase's (`warmup_metrics`) and never
 * reach `profile_export.jsonl`. Commands whose durations run for minutes are run with shorter
 * durations and the same flags.
 */
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

interface Summary {
  request_count: { avg: number };
  warmup_metrics: { request_count: { avg: number } };
  load: { description: string; warmup: { strategy: string; description: string; issued: number } };
  prefill_wait?: { count: number };
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

test('warmup.md "Different Concurrency": 50 warm-up requests at concurrency 20, then 500 at 100', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --concurrency 100 \\
    --warmup-concurrency 20 \\
    --warmup-request-count 50 \\
    --request-count 500`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { summary, records } = run.artifacts;
  assert.equal(summary.warmup_metrics.request_count.avg, 50);
  assert.equal(summary.load.warmup.description, 'concurrency 20');
  assert.equal(summary.load.description, 'concurrency 100');
  assert.equal(summary.request_count.avg, 500);
  assert.equal(records.length, 500);
  assert.ok(records.every((r) => r.metadata.benchmark_phase === 'profiling'));
});

test('warmup.md "Minimal Warmup": 20 warm-up requests at the profiling concurrency, then 500', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --concurrency 50 \\
    --warmup-request-count 20 \\
    --request-count 500`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { summary, records } = run.artifacts;
  assert.equal(summary.warmup_metrics.request_count.avg, 20);
  assert.equal(summary.load.warmup.description, 'concurrency 50');
  assert.equal(records.length, 500);
});

test('warmup.md "Multi-Turn Warmup" (500 profiling requests cut to 20): 10 whole 5-turn sessions', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --session-turns-mean 5 \\
    --num-warmup-sessions 10 \\
    --request-count 20`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { summary, records } = run.artifacts;
  assert.equal(summary.warmup_metrics.request_count.avg, 50);
  assert.equal(summary.load.warmup.issued, 50);
  assert.equal(records.length, 20);
});

test('warmup.md "Prefill Concurrency Warmup" (120 s cut to 2 s): warm-up at 20 sessions and 2 prefills, then 50 and 5', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --concurrency 50 \\
    --prefill-concurrency 5 \\
    --warmup-concurrency 20 \\
    --warmup-prefill-concurrency 2 \\
    --warmup-request-count 50 \\
    --benchmark-duration 2`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { summary, records } = run.artifacts;
  assert.equal(summary.warmup_metrics.request_count.avg, 50);
  assert.equal(
    summary.load.warmup.description,
    'concurrency 20, at most 2 requests in prefill (send to first token)',
  );
  assert.equal(
    summary.load.description,
    'concurrency 50, at most 5 requests in prefill (send to first token)',
  );
  assert.ok(records.length > 0);
  assert.ok(records.every((r) => typeof r.metrics.prefill_wait?.value === 'number'));
});

test('warmup.md "Different Request Rate" (30 s and 120 s cut to 1 s and 2 s): the warm-up at 10/s, profiling at 50/s', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --request-rate 50 \\
    --warmup-request-rate 10 \\
    --warmup-duration 1 \\
    --benchmark-duration 2`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { summary } = run.artifacts;
  assert.equal(summary.load.warmup.strategy, 'request_rate');
  assert.equal(summary.load.warmup.description, 'request rate 10/s (poisson)');
  assert.equal(summary.load.description, 'request rate 50/s (poisson)');
  assert.ok(summary.warmup_metrics.request_count.avg > 0);
});

test('a warm-up load option without a warm-up, --warmup-grace-period without --warmup-duration, and two warm-up counts are refused', async () => {
  for (const [extra, message] of [
    [
      ['--warmup-concurrency', '5'],
      /--warmup-concurrency set the warm-up's load, but no warm-up was asked for/,
    ],
    [
      ['--warmup-request-count', '5', '--warmup-grace-period', '3'],
      /--warmup-grace-period requires --warmup-duration/,
    ],
    [
      ['--warmup-request-count', '5', '--num-warmup-sessions', '2'],
      /--num-warmup-sessions and --warmup-request-count cannot be combined/,
    ],
  ] as const) {
    const run = await runDocCommand(
      `aiperf profile --model your-model --url localhost:8000 --concurrency 2 --request-count 4 ${extra.join(' ')}`,
      sim.url,
    ).catch((err: Error) => err);
    assert.ok(run instanceof Error, 'no run folder is written');
    assert.match(run.message, /exit 2/);
    assert.match(run.message, message);
  }
});

test('--num-profile-runs 2 with a warm-up of its own load: the first run warms up, the second runs without one', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-warm-runs-'));
  const { code, stderr } = await runCliInProcess([
    'profile',
    ...['--model', 'your-model', '--tokenizer', 'builtin', '--url', sim.url, '--streaming'],
    ...['--num-profile-runs', '2', '--warmup-request-count', '3', '--warmup-concurrency', '2'],
    ...['--concurrency', '3', '--request-count', '4', '--artifact-dir', dir, '--ui', 'none'],
  ]);
  assert.equal(code, 0, stderr);
  const first = readRunArtifacts<Partial<Summary>>(join(dir, 'profile_runs', 'run_0001')).summary;
  const second = readRunArtifacts<Partial<Summary>>(join(dir, 'profile_runs', 'run_0002')).summary;
  assert.equal(first.warmup_metrics?.request_count.avg, 3);
  assert.equal(first.load?.warmup.description, 'concurrency 2');
  assert.equal(second.warmup_metrics, undefined);
});
