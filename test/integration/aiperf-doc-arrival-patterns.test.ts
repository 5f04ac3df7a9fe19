/**
 * AIPerf's docs/tutorials/arrival-patterns.md, its commands run with `aiperf` replaced by `tokenload`
 * against the simulator, durations cut (60 s → 2 s, warm-up 30 s → 1 s): `--output-dir` is AIPerf's
 * tutorials' name for `--artifact-dir`; constant arrivals are scheduled exactly 1/rate apart (where
 * the client did not re-anchor a stall, which the summary counts); gamma arrivals with smoothness 5
 * spread less than Poisson ones; the warm-up takes its own arrival pattern (the summary's `load`).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import type { ExportedRecord } from '../helpers/run-artifacts.js';

interface Summary {
  pacing: { schedule_reanchors: number };
  load: { description: string; warmup?: { strategy: string; description: string } };
  warmup_metrics?: { request_count: { avg: number } };
}

/** Gaps between consecutive scheduled sends, µs. */
function gapsUs(records: readonly ExportedRecord[]): number[] {
  const ticks = records
    .map((r) => BigInt(r.metadata.request_scheduled_ns as string))
    .sort((a, b) => Number(a - b));
  return ticks.slice(1).map((t, k) => Math.round(Number(t - (ticks[k] as bigint)) / 1e3));
}

/**
 * Spread of `xs`: interquartile range over median (1.58 for exponential gaps, about 0.6 for gamma
 * with shape 5); robust to the few long gaps a client stall past its catch-up bound leaves.
 */
function spreadOf(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.floor(q * (sorted.length - 1))] as number;
  return (at(0.75) - at(0.25)) / at(0.5);
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

test('"Baseline vs Realistic", run 1 (60 s cut to 2 s): into results/constant, sends 10 ms apart', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --request-rate 100 \\
    --arrival-pattern constant \\
    --benchmark-duration 2 \\
    --output-dir results/constant`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.runFolder, 'results/constant');
  const gaps = gapsUs(run.artifacts.records);
  assert.ok(
    gaps.length > 0 && gaps.every((g) => g >= 10_000),
    'no send sooner than 10 ms after the one before',
  );
  const offBeat = gaps.filter((g) => g !== 10_000).length;
  assert.ok(offBeat <= run.artifacts.summary.pacing.schedule_reanchors, `${offBeat} gaps off the 10 ms beat`);
});

test('"Smooth Traffic" (gamma, smoothness 5.0) spreads its gaps less than Poisson arrivals at the same rate', async () => {
  const spread = async (pattern: string): Promise<number> => {
    const run = await runDocCommand(
      `aiperf profile --model your-model --url localhost:8000 --endpoint-type chat --streaming --request-rate 50 ${pattern} --benchmark-duration 2 --random-seed 1`,
      sim.url,
    );
    assert.equal(run.code, 0, run.stderr);
    return spreadOf(gapsUs(run.artifacts.records));
  };
  assert.ok(
    (await spread('--arrival-pattern gamma --arrival-smoothness 5.0')) <
      (await spread('--arrival-pattern poisson')),
  );
});

test('"Warmup with Stable Pattern" (30 s and 120 s cut to 1 s and 2 s): the warm-up’s arrivals are constant, profiling’s gamma', async () => {
  const run = await runDocCommand<Summary>(
    `aiperf profile \\
    --model your-model \\
    --url localhost:8000 \\
    --endpoint-type chat \\
    --streaming \\
    --request-rate 100 \\
    --arrival-pattern gamma \\
    --arrival-smoothness 0.8 \\
    --warmup-arrival-pattern constant \\
    --warmup-duration 1 \\
    --benchmark-duration 2`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.artifacts.summary.load.warmup?.description, 'request rate 100/s (constant)');
  assert.equal(run.artifacts.summary.load.description, 'request rate 100/s (gamma, smoothness 0.8)');
  assert.ok((run.artifacts.summary.warmup_metrics?.request_count.avg ?? 0) > 0);
});
