/**
 * AIPerf's docs/tutorials/prefill-concurrency.md, its commands run with `aiperf` replaced by
 * `tokenload` against the simulator: at no moment are more than `--prefill-concurrency` requests
 * between their start and their first token (read from each record's `request_start_ns` and TTFT),
 * `--prefill-concurrency-ramp-duration` ends with every slot open, and each record says how
 * long it waited for its slot (`prefill_wait`). Commands that run for minutes are run shorter.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runDocCommand } from '../helpers/aiperf-doc-run.js';
import type { ExportedRecord } from '../helpers/run-artifacts.js';

/** Each record's prefill span: from its start to its first token, epoch ns. */
function prefillSpans(records: readonly ExportedRecord[]): Array<{ start: bigint; end: bigint }> {
  return records.map((r) => {
    const start = BigInt(r.metadata.request_start_ns as string);
    const ttft = r.metrics.time_to_first_token?.value;
    assert.ok(ttft !== undefined, 'every request has a first token');
    return { start, end: start + BigInt(Math.round(ttft * 1e6)) };
  });
}

/**
 * The most spans open at once, at each span's start (a span ending exactly when another starts is
 * not open then), with the start times.
 */
function openAtStarts(spans: ReturnType<typeof prefillSpans>): Array<{ at: bigint; open: number }> {
  return spans.map((s) => ({
    at: s.start,
    open: spans.filter((o) => o.start <= s.start && o.end > s.start).length,
  }));
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 20, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

test('prefill-concurrency.md "Controlling Prefill Queue Depth": 100 requests, never more than 3 before their first token', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    --model Qwen/Qwen3-0.6B \\
    --endpoint-type chat \\
    --streaming \\
    --url localhost:8000 \\
    --concurrency 30 \\
    --prefill-concurrency 3 \\
    --synthetic-input-tokens-mean 16000 \\
    --output-tokens-mean 500 \\
    --request-count 100`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records } = run.artifacts;
  assert.equal(records.length, 100);
  const most = Math.max(...openAtStarts(prefillSpans(records)).map((o) => o.open));
  assert.equal(most, 3, 'three requests were in prefill at once, never more');
  assert.ok(records.every((r) => typeof r.metrics.prefill_wait?.value === 'number'));
  assert.ok(
    records.some((r) => (r.metrics.prefill_wait?.value ?? 0) > 0),
    'some request waited for a slot',
  );
});

test('prefill-concurrency.md "Gradual Prefill Ramp-Up" (30 s ramp and 120 s cut to 2 s and 4 s): slots open one by one up to 5', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --endpoint-type chat \\
    --streaming \\
    --url localhost:8000 \\
    --concurrency 50 \\
    --prefill-concurrency 5 \\
    --prefill-concurrency-ramp-duration 2 \\
    --synthetic-input-tokens-mean 32000 \\
    --output-tokens-mean 200 \\
    --benchmark-duration 4`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  // When each slot opens is timed on a virtual clock (test/unit/timing-ramped-semaphore.test.ts): a
  // record's start is later than its slot by the client's own lag, which the artifacts do not give.
  const open = openAtStarts(prefillSpans(run.artifacts.records));
  assert.equal(open.filter((o) => o.open > 5).length, 0);
  assert.equal(Math.max(...open.map((o) => o.open)), 5, 'all five slots open once the ramp is over');
});

test('prefill-concurrency.md "Combined with Request Rate" (60 s cut to 3 s): arrivals at 10/s, at most 10 in prefill', async () => {
  const run = await runDocCommand(
    `aiperf profile \\
    --model Qwen/Qwen2.5-7B-Instruct \\
    --endpoint-type chat \\
    --streaming \\
    --url localhost:8000 \\
    --request-rate 10 \\
    --concurrency 100 \\
    --prefill-concurrency 10 \\
    --synthetic-input-tokens-mean 8000 \\
    --output-tokens-mean 300 \\
    --benchmark-duration 3`,
    sim.url,
  );
  assert.equal(run.code, 0, run.stderr);
  const { records } = run.artifacts;
  assert.ok(records.length > 0);
  assert.ok(Math.max(...openAtStarts(prefillSpans(records)).map((o) => o.open)) <= 10);
  for (const r of records) {
    // The wait for a slot is part of the send's lateness, never of TTFT.
    const lag = r.metrics.schedule_lag?.value;
    const wait = r.metrics.prefill_wait?.value;
    assert.ok(lag !== undefined && wait !== undefined && lag >= wait, JSON.stringify(r.metrics));
  }
});

test('--prefill-concurrency without --streaming, or above --concurrency, is refused before anything runs', async () => {
  for (const [extra, message] of [
    ['--concurrency 4', /--prefill-concurrency needs --streaming/],
    ['--streaming --concurrency 2', /--prefill-concurrency 3 must be <= --concurrency 2/],
  ] as const) {
    const run = await runDocCommand(
      `aiperf profile --model your-model --url localhost:8000 --prefill-concurrency 3 --request-count 4 ${extra}`,
      sim.url,
    ).catch((err: Error) => err);
    assert.ok(run instanceof Error, 'no run folder is written');
    assert.match(run.message, /exit 2/);
    assert.match(run.message, message);
  }
});
