/**
 * AIPerf's docs/tutorials/ramping.md, its "Ramping Request Rate" command run with `aiperf` replaced
 * by `tokenload` against the simulator, ramp and duration shortened (60 s and 120 s → 2 s and 4 s):
 * `--duration` is AIPerf's tutorials' name for `--benchmark-duration`, and a ramped rate sends fewer
 * requests in its first second than in a second at full rate. The page's other commands, which read
 * counts and descriptions, are in test/integration/aiperf-doc-ramping-counts.test.ts.
 *
 * Serial: a rate ramp's schedule keeps its shape only while the client keeps up; a client stalled
 * past the 100 ms catch-up bound by other tests re-anchors its timeline and drops ticks from the
 * full-rate second the ramp is compared with. The run keeps the client warm-up (a cold client is
 * what stalls first).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import type { ExportedRecord } from '../helpers/run-artifacts.js';

interface Summary {
  input_config: { loadgen: Record<string, unknown> };
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
