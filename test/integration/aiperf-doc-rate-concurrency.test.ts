/**
 * AIPerf's docs/tutorials/request-rate-concurrency.md, both commands run whole with `aiperf`
 * replaced by `tokenload` against the simulator: the request count the doc states, never more
 * requests in flight than `--concurrency` (read from each record's start and end), and with
 * `--request-rate-mode constant` sends scheduled exactly 1/rate apart until the cap is reached.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import type { ExportedRecord } from '../helpers/run-artifacts.js';

/** The most records in flight (start to end) at any record's start. */
function mostInFlight(records: readonly ExportedRecord[]): number {
  const spans = records.map((r) => ({
    start: BigInt(r.metadata.request_start_ns as string),
    end: BigInt(r.metadata.request_end_ns as string),
  }));
  return Math.max(...spans.map((s) => spans.filter((o) => o.start <= s.start && o.end > s.start).length));
}

let sim: RunningSimulator;
// Ten tokens a chunk: the same answer times, a tenth of the SSE chunks (220,000 at one a token) to
// write and parse; the tests read request counts, starts, ends and schedules, not chunks.
before(async () => {
  sim = await startSimulator({
    mode: 'fixed',
    ttftMs: 20,
    itlMs: 2,
    tokensPerChunk: 10,
    tokenizer: 'builtin',
  });
});
after(() => sim.close());

test('"Poisson Mode": 500 requests at 200/s, never more than 100 in flight', async () => {
  const run = await runDocCommand<{ load: { description: string } }>(
    `aiperf profile \\
    --model Qwen/Qwen3-0.6B \\
    --endpoint-type chat \\
    --endpoint /v1/chat/completions \\
    --streaming \\
    --url localhost:8000 \\
    --concurrency 100 \\
    --request-rate 200 \\
    --request-rate-mode poisson \\
    --random-seed 42 \\
    --request-count 500 \\
    --synthetic-input-tokens-mean 500 \\
    --output-tokens-mean 200`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(records.length, 500);
  assert.equal(summary.load.description, 'request rate 200/s (poisson), at most 100 sessions');
  assert.ok(mostInFlight(records) <= 100);
});

test('"Constant Mode": 300 requests, the first 50 scheduled exactly 20 ms apart, never more than 50 in flight', async () => {
  const run = await runDocCommand<{ pacing: { schedule_reanchors: number } }>(
    `aiperf profile \\
    --model Qwen/Qwen3-0.6B \\
    --endpoint-type chat \\
    --endpoint /v1/chat/completions \\
    --streaming \\
    --url localhost:8000 \\
    --concurrency 50 \\
    --request-rate 50 \\
    --request-rate-mode constant \\
    --request-count 300 \\
    --synthetic-input-tokens-mean 800 \\
    --output-tokens-mean 400`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records, summary } = run.artifacts;
  assert.equal(records.length, 300);
  assert.ok(mostInFlight(records) <= 50);
  const ticks = records
    .map((r) => BigInt(r.metadata.request_scheduled_ns as string))
    .sort((a, b) => Number(a - b));
  // The first 50 sends cannot meet a full cap (50 slots), so their ticks are the constant schedule:
  // 20 ms apart (to within the ns the epoch conversion rounds each stamp to), but where the client
  // stalled past its catch-up bound and re-anchored, which the summary counts. Later ticks wait for
  // a slot whenever the server holds 50 answers open, as AIPerf's sleep-then-gate does. No tick
  // ever comes sooner than 20 ms after the one before.
  const gapsUs = ticks.slice(1).map((t, k) => Math.round(Number(t - (ticks[k] as bigint)) / 1e3));
  assert.ok(
    gapsUs.every((g) => g >= 20_000),
    `a gap under 20 ms: ${gapsUs.join(', ')}`,
  );
  const offBeat = gapsUs.slice(0, 49).filter((g) => g !== 20_000).length;
  assert.ok(offBeat <= summary.pacing.schedule_reanchors, `${offBeat} gaps off the 20 ms beat`);
});
