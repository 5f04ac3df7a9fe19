/**
 * AIPerf's docs/tutorials/ramping.md, its commands run with `aiperf` replaced by `tokenload` against
 * the simulator, ramps and durations shortened (30 s → 2 s): a concurrency ramp sends the stated
 * count, rate and concurrency ramp together, the warm-up ramps on its own, and the two prefill
 * commands written without `--streaming` are refused before anything runs (a prefill slot is
 * released by the first token, which only a streamed answer shows). These read counts and
 * descriptions, not times, so they run in the parallel group without the client warm-up
 * (`runDocCommand`'s default); the ramped rate's shape, which is timed, is in
 * test/serial/aiperf-doc-ramping.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';

interface Summary {
  load: { description: string; warmup?: { description: string } };
  warmup_metrics?: { request_count: { avg: number } };
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
