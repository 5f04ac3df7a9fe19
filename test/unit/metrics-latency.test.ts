import assert from 'node:assert/strict';
import { test } from 'node:test';
import { processRecord } from '../../src/record/process.js';
import type { ContentChunk, RawRecord } from '../../src/record/types.js';

const MS = 1e6;

function chunk(atMs: number, text = 'x', reasoning = '', usageCompletionTokens?: number): ContentChunk {
  const c: ContentChunk = { atNs: atMs * MS, text, reasoning };
  if (usageCompletionTokens !== undefined) c.usageCompletionTokens = usageCompletionTokens;
  return c;
}

function raw(over: Partial<RawRecord>): RawRecord {
  return {
    conversationId: 'c0',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: 'req-1',
    xCorrelationId: 'corr-1',
    model: 'm',
    scheduledNs: null,
    startNs: 1000 * MS,
    sentNs: null,
    connectionReused: null,
    connectDurationNs: null,
    ackNs: 1005 * MS,
    responseStreamed: true,
    chunks: [],
    streamEndNs: null,
    endNs: 2000 * MS,
    usage: null,
    finishReason: 'stop',
    inputTokens: 50,
    requestedOutputTokens: null,
    httpStatus: 200,
    parseErrors: 0,
    error: null,
    cancelled: false,
    ...over,
  };
}

const STREAM = { tokenizer: null, useServerTokenCount: false, streaming: true, perChunkUsage: false };
const PER_CHUNK = { ...STREAM, perChunkUsage: true };

test('TTFT, TTST, TTFO, request latency from content chunks', () => {
  // start 1000 ms; reasoning chunk at 1020, output chunks at 1050, 1060, 1090; usage chunk / [DONE] at
  // 1200 (streamEndNs) and connection release at 1300 must not extend the latency.
  const r = raw({
    chunks: [chunk(1020, '', 'think'), chunk(1050), chunk(1060), chunk(1090)],
    streamEndNs: 1200 * MS,
    endNs: 1300 * MS,
  });
  const m = processRecord(r, STREAM).metrics;
  assert.equal(m.time_to_first_token, 20); // 1020 − 1000
  assert.equal(m.time_to_second_token, 30); // 1050 − 1020
  assert.equal(m.time_to_first_output_token, 50); // 1050 − 1000 (first non-reasoning chunk)
  assert.equal(m.request_latency, 90); // 1090 − 1000, not 200 or 300
});

test('ITL = (latency − TTFT)/(OSL − 1) and per-user throughput = 1000/ITL', () => {
  // 5 chunks at 1100, 1120, 1140, 1160, 1180 with one token each (no tokenizer, no usage): OSL 5.
  const r = raw({ chunks: [1100, 1120, 1140, 1160, 1180].map((t) => chunk(t)) });
  const m = processRecord(r, STREAM).metrics;
  assert.equal(m.output_sequence_length, 5);
  // latency 180, TTFT 100 → (180 − 100)/(5 − 1) = 20 ms
  assert.equal(m.inter_token_latency, 20);
  assert.equal(m.output_token_throughput_per_user, 50); // 1000/20
});

test('ITL uses server OSL and is omitted when OSL < 2', () => {
  const two = raw({
    chunks: [chunk(1100), chunk(1150)],
    usage: { prompt_tokens: 50, completion_tokens: 11 },
  });
  // latency 150, TTFT 100, OSL 11 (server usage) → 50/10 = 5 ms
  assert.equal(processRecord(two, STREAM).metrics.inter_token_latency, 5);
  const one = raw({ chunks: [chunk(1100)], usage: { prompt_tokens: 50, completion_tokens: 1 } });
  const m = processRecord(one, STREAM).metrics;
  assert.equal(m.inter_token_latency, undefined);
  assert.equal(m.output_token_throughput_per_user, undefined);
  assert.equal(m.time_to_second_token, undefined);
  assert.equal(m.inter_chunk_latency, undefined);
});

test('ITL divisor with a multi-token first chunk: OSL − 1 by default, OSL − k only with --per-chunk-usage', () => {
  // First chunk already holds 4 tokens (running completion_tokens 4), OSL 10; latency 1160 − 1000 =
  // 160, TTFT 100. AIPerf's default: 60/(10 − 1). With --per-chunk-usage: divisor 10 − 4 = 6 → 10 ms.
  const r = raw({
    chunks: [chunk(1100, 'x', '', 4), chunk(1130, 'x', '', 7), chunk(1160, 'x', '', 10)],
    usage: { prompt_tokens: 50, completion_tokens: 10 },
  });
  assert.equal(processRecord(r, STREAM).metrics.inter_token_latency, 60 / 9);
  assert.equal(processRecord(r, STREAM).itlPerChunkFallback, undefined);
  assert.equal(processRecord(r, PER_CHUNK).metrics.inter_token_latency, 10);
  assert.equal(processRecord(r, PER_CHUNK).itlPerChunkFallback, undefined);
  // A first-chunk count outside (0, OSL) falls back to OSL − 1: 60/9, and the record says so.
  const bad = raw({
    chunks: [chunk(1100, 'x', '', 10), chunk(1160, 'x', '', 10)],
    usage: { prompt_tokens: 50, completion_tokens: 10 },
  });
  assert.equal(processRecord(bad, PER_CHUNK).metrics.inter_token_latency, 60 / 9);
  assert.equal(processRecord(bad, PER_CHUNK).itlPerChunkFallback, true);
});

test('ICL lists every gap between content chunks; non-monotonic arrivals suppress it', () => {
  const r = raw({ chunks: [chunk(1100), chunk(1103), chunk(1110), chunk(1111)] });
  assert.deepEqual(processRecord(r, STREAM).metrics.inter_chunk_latency, [3, 7, 1]);
  const back = raw({ chunks: [chunk(1100), chunk(1090)] });
  assert.equal(processRecord(back, STREAM).metrics.inter_chunk_latency, undefined);
});

test('schedule_lag is on the wire − scheduled, split into client_lag and connection_wait, ms, absolute', () => {
  // scheduled 997.5 ms, started 1000 ms, on the wire 1001.25 ms → 3.75 ms late, 2.5 of them the client's
  const r = raw({ scheduledNs: 997.5 * MS, sentNs: 1001.25 * MS, chunks: [chunk(1100)] });
  const m = processRecord(r, STREAM).metrics;
  assert.deepEqual([m.schedule_lag, m.client_lag, m.connection_wait], [3.75, 2.5, 1.25]);
  const unscheduled = raw({ sentNs: 1001 * MS, chunks: [chunk(1100)] });
  const u = processRecord(unscheduled, STREAM).metrics;
  assert.deepEqual([u.schedule_lag, u.client_lag, u.connection_wait], [undefined, undefined, 1]);
  const unsent = raw({ scheduledNs: 997.5 * MS, chunks: [chunk(1100)] });
  assert.equal(processRecord(unsent, STREAM).metrics.schedule_lag, undefined);
});

test('latency from the schedule: TTFT and latency from request_scheduled_ns; client_lag net of concurrency_wait', () => {
  // scheduled 990 ms, a session slot freed at 996 ms (6 ms of the cap's), started 1000 ms
  const r = raw({
    scheduledNs: 990 * MS,
    concurrencyWaitNs: 6 * MS,
    sentNs: 1001 * MS,
    chunks: [chunk(1100), chunk(1150)],
  });
  const m = processRecord(r, STREAM).metrics;
  assert.deepEqual(
    [
      m.time_to_first_token_from_schedule,
      m.request_latency_from_schedule,
      m.time_to_first_token,
      m.request_latency,
    ],
    [110, 160, 100, 150],
  );
  assert.deepEqual([m.schedule_lag, m.concurrency_wait, m.client_lag, m.connection_wait], [11, 6, 4, 1]);
  const unscheduled = processRecord(raw({ chunks: [chunk(1100)] }), STREAM).metrics;
  assert.deepEqual(
    [
      unscheduled.time_to_first_token_from_schedule,
      unscheduled.request_latency_from_schedule,
      unscheduled.concurrency_wait,
    ],
    [undefined, undefined, undefined],
  );
  const error = {
    kind: 'http_status' as const,
    code: 503,
    type: 'Service Unavailable',
    message: '',
    failedAtNs: 0,
  };
  const failed = processRecord(raw({ scheduledNs: 990 * MS, concurrencyWaitNs: 0, error }), STREAM).metrics;
  assert.equal(failed.request_latency_from_schedule, undefined, 'a failed request has no latency');
  assert.equal(failed.concurrency_wait, 0, 'but how it was sent is kept');
});

test('connect_time only for a request that waited for a new connection', () => {
  const opened = raw({
    sentNs: 1002 * MS,
    connectionReused: false,
    connectDurationNs: 0.75 * MS,
    chunks: [chunk(1100)],
  });
  assert.equal(processRecord(opened, STREAM).metrics.connect_time, 0.75);
  const reused = raw({ sentNs: 1002 * MS, connectionReused: true, chunks: [chunk(1100)] });
  assert.equal(processRecord(reused, STREAM).metrics.connect_time, undefined);
});

test('schedule_lag = sent − scheduled, client_lag + connection_wait, for failed requests too', () => {
  // scheduled 997.5 ms, started 1000 ms, on the wire 1001 ms → 3.5 ms late: 2.5 client, 1 connection
  const r = raw({ scheduledNs: 997.5 * MS, sentNs: 1001 * MS, chunks: [chunk(1100)] });
  const m = processRecord(r, STREAM).metrics;
  assert.deepEqual([m.schedule_lag, m.client_lag, m.connection_wait], [3.5, 2.5, 1]);
  const unscheduled = raw({ sentNs: 1001 * MS, chunks: [chunk(1100)] });
  assert.equal(processRecord(unscheduled, STREAM).metrics.schedule_lag, undefined);
  const error = {
    kind: 'http_status' as const,
    code: 429,
    type: 'Too Many Requests',
    message: '',
    failedAtNs: 0,
  };
  const refused = processRecord(raw({ scheduledNs: 997.5 * MS, sentNs: 1001 * MS, error }), STREAM);
  assert.equal(refused.valid, false);
  assert.deepEqual(refused.metrics, {
    schedule_lag: 3.5,
    client_lag: 2.5,
    connection_wait: 1,
    error_isl: 50,
  });
});

test('stream-only metrics are omitted for non-streaming runs', () => {
  const r = raw({ chunks: [chunk(1400)] });
  const m = processRecord(r, { ...STREAM, streaming: false }).metrics;
  assert.equal(m.time_to_first_token, undefined);
  assert.equal(m.inter_token_latency, undefined);
  assert.equal(m.request_latency, 400); // 1400 − 1000
});
