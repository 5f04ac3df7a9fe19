/**
 * AIPerf's docs/tutorials/ramping.md, its commands run with `aiperf` replaced by `tokenload`
 * against the simulator, ramps and durations shortened (30 s → 2 s): `--duration` is AIPerf's
 * tutorials' name for `--benchmark-duration`, a ramped rate sends fewer requests in its first
 * second than in a second at full rate, rate and concurrency ramp together, the warm-up ramps on its
 * own, and the two prefill commands written without `--streaming` are refused before anything runs
 * (a prefill slot is released by the first token, which only a streamed answer shows).
 *
 * Serial: a rate ramp's schedule keeps its shape only while the client keeps up; a client stalled
 * past the 100 ms catch-up bound by other tests re-anchors its timeline and drops ticks from the
 * full-rate second the ramp is compared with. That test keeps the client warm-up (a cold client is
 * what stalls first); the others read counts and descriptions, not times, and run without it
 * (`runDocCommand`'s default, test/helpers/aiperf-doc-run.ts).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import type { ExportedRecord } from '../helpers/run-artifacts.js';

interface Summary {
  load: { description: string; warmup?: { description: string } };
  input_config: { loadgen: Record<string, unknown> };
  warmup_metrics?: { request_count: { avg: number } };
}

/** Scheduled sends in [fromS, toS) seconds after the first scheduled one. */
function scheduledBetween(records: readonly ExportedRecord[], fromS: number, toS: number): number {
  const ticks = records.map((r) => BigInt(r.metadata.request_scheduled_ns as string));
  const [t0 = 0n] = [...ticks].sort((a, b) => Number(a - b));
  return ticks.filter((t) => Number(t - t0) >= fromS * 1e9 && Number(t - t0) < toS * 1e9).length;
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

test('"Ramping Concurrency" (30 s ramp cut to 2 s): 1000 requests, slots opened over 2 s', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --concurrency 100 \\
    --concurrency-ramp-duration 2 \\
    --request-count 1000`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.artifacts.records.length, 1000);
  assert.equal(run.artifacts.summary.load.description, 'concurrency 100 (ramp 2 s)');
});

test('"Ramping Request Rate" (60 s ramp and --duration 120 cut to 2 s and 4 s): fewer sends in the first second than at full rate', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --request-rate 100 \\
    --request-rate-ramp-duration 2 \\
    --duration 4`,
    sim.url,
    { clientWarmup: true },
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(summary.input_config.loadgen.benchmark_duration, 4);
  assert.ok(scheduledBetween(records, 0, 1) < scheduledBetween(records, 2.5, 3.5));
});

test('"Combining Rate and Concurrency Ramping" (30 s ramps, --duration 120 cut to 2 s and 4 s): both ramp', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --request-rate 200 \\
    --request-rate-ramp-duration 2 \\
    --concurrency 100 \\
    --concurrency-ramp-duration 2 \\
    --duration 4`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(
    summary.load.description,
    'request rate 200/s (poisson), at most 100 sessions (opened over 2 s)',
  );
  assert.ok(records.length > 0);
});

test('"Warmup Phase Ramping" (10 s and 30 s ramps cut to 1 s and 2 s): 500 warm-up requests at up to 50, then 2000', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --warmup-concurrency 50 \\
    --warmup-concurrency-ramp-duration 1 \\
    --warmup-request-count 500 \\
    --concurrency 200 \\
    --concurrency-ramp-duration 2 \\
    --request-count 2000`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(summary.warmup_metrics?.request_count.avg, 500);
  assert.equal(summary.load.warmup?.description, 'concurrency 50 (ramp 1 s)');
  assert.equal(summary.load.description, 'concurrency 200 (ramp 2 s)');
  assert.equal(records.length, 2000);
});

test('"Prefill Concurrency Ramping" and "Long-Context Memory Protection", written without --streaming: refused, exit 2', async () => {
  for (const command of [
    'aiperf profile --model your-model --url localhost:8000 --concurrency 100 --prefill-concurrency 20 --prefill-concurrency-ramp-duration 20 --synthetic-input-tokens-mean 8000',
    'aiperf profile --model your-model --url localhost:8000 --concurrency 50 --prefill-concurrency 5 --prefill-concurrency-ramp-duration 30 --synthetic-input-tokens-mean 32000',
  ]) {
    const run = await runDocCommand(command, sim.url).catch((err: Error) => err);
    assert.ok(run instanceof Error, 'no run folder is written');
    assert.match(run.message, /exit 2/);
    assert.match(run.message, /--prefill-concurrency needs --streaming/);
  }
});
