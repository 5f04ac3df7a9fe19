/**
 * The record line reader is the writer's exact inverse: a line read back and written again is the
 * same bytes (epoch ns beyond 2^53, nulls, errors, usage with cached tokens, list metrics,
 * non-finite values), and a line the writer would not write fails naming the field.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatRecordLine } from '../../src/export/jsonl-writer.js';
import { EpochBase, RecordLineError, readRecordLine } from '../../src/export/record-reader.js';
import { summarize } from '../../src/metrics/summary.js';
import type { ProcessedRecord } from '../../src/record/types.js';
import { SAMPLE_ORIGIN_NS, SAMPLE_TIME, sampleRecord } from '../helpers/sample-record.js';

const ORIGIN = SAMPLE_ORIGIN_NS;
const time = SAMPLE_TIME;

/** The sample record with usage, cached tokens, the prompt's layout and a server. */
function record(
  over: Partial<ProcessedRecord['raw']> = {},
  rest: Partial<ProcessedRecord> = {},
): ProcessedRecord {
  const r = sampleRecord({
    usage: {
      prompt_tokens: 12,
      completion_tokens: 3,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 8 },
    },
    finishReason: 'length',
    sentPromptTokens: 10,
    promptLayout: 'system×1 user×1',
    serverUrl: 'http://127.0.0.1:8000',
    ...over,
  });
  return {
    ...r,
    metrics: {
      time_to_first_token: 20.123456789,
      inter_chunk_latency: [1, 2.5, 1e-7],
      usage_cached_tokens: 8,
      ideal_cached_tokens: 16,
    },
    islSource: 'client_prompt',
    oslSource: 'server_usage',
    ...rest,
  };
}

const FAILED = record(
  {
    error: {
      kind: 'http_status',
      code: 429,
      type: 'Too Many Requests',
      message: 'slow "down"',
      failedAtNs: 1_100_000_000,
      retryAfter: '2',
    },
    usage: null,
    ackNs: null,
    sentNs: null,
    connectionReused: null,
    responseStreamed: null,
    finishReason: null,
    scheduledNs: null,
    requestType: undefined,
    serverUrl: undefined,
    sentPromptTokens: undefined,
    promptLayout: undefined,
    inputTokens: null,
    requestedOutputTokens: null,
  },
  { valid: false, metrics: { error_isl: 10, schedule_lag: Number.NaN }, islSource: undefined },
);

const CASES: Record<string, ProcessedRecord> = {
  'a streamed answer with usage and cached tokens': record(),
  'a failed request: every nullable field null, retry_after, a non-finite metric': FAILED,
  'a whole-body answer in a streaming run, the per-chunk usage fallback': record(
    { responseStreamed: false },
    { itlPerChunkFallback: true, notStreamed: true, oslSource: 'client_tokenizer' },
  ),
  'a conversation id that looks like a time key': record({
    conversationId: 'x","request_start_ns":5,"y',
    xRequestId: '{"request_end_ns":1}',
  }),
  'times long before and after the base': record({ startNs: -86_400e9, endNs: 90 * 86_400e9 }),
  'a stream that was buffered, cumulative and carried a usage not used': record(
    {},
    {
      oslSource: 'client_tokenizer',
      streamIntegrity: {
        buffered: { largest_burst_chunks: 7, zero_gaps: 11, gaps: 12 },
        cumulative: true,
        usage_untrusted: ['completion_tokens', 'total_tokens'],
      },
    },
  ),
};

for (const [name, r] of Object.entries(CASES)) {
  test(`read and written again, the same line: ${name}`, () => {
    const line = formatRecordLine(r, time).slice(0, -1);
    const read = readRecordLine(line, { time: new EpochBase(ORIGIN), streaming: true });
    assert.equal(formatRecordLine(read, time).slice(0, -1), line);
    assert.equal(read.valid, r.valid);
    assert.equal(read.notStreamed, r.notStreamed);
    assert.equal(read.raw.startNs, r.raw.startNs);
    // What the summary makes of it is the record's own summary.
    assert.deepEqual(summarize([read]), summarize([r]));
  });
}

test('a whole-body answer is not-streamed only in a streaming run', () => {
  const line = formatRecordLine(record({ responseStreamed: false }), time);
  assert.equal(
    readRecordLine(line, { time: new EpochBase(ORIGIN), streaming: false }).notStreamed,
    undefined,
  );
  assert.equal(readRecordLine(line, { time: new EpochBase(ORIGIN), streaming: true }).notStreamed, true);
});

test('one EpochBase puts lines of several files on one axis: the first time it sees is 0', () => {
  const base = new EpochBase();
  const a = readRecordLine(formatRecordLine(record({ startNs: 5e9 }), time), { time: base, streaming: true });
  const b = readRecordLine(formatRecordLine(record({ startNs: 2e9 }), time), { time: base, streaming: true });
  assert.equal(a.raw.startNs, 0);
  assert.equal(b.raw.startNs, -3e9);
  assert.equal(base.baseEpochNs, ORIGIN + 5_000_000_000n);
});

function failureOf(line: string): RecordLineError {
  try {
    readRecordLine(line, { time: new EpochBase(), streaming: true });
  } catch (err) {
    assert.ok(err instanceof RecordLineError, String(err));
    return err;
  }
  assert.fail('the line was read');
}

test('a line the writer would not write fails naming the field', () => {
  const good = formatRecordLine(record(), time).slice(0, -1);
  const cases: Array<[string, string, RegExp]> = [
    ['{"metadata":', '', /not JSON/],
    [good.replace('"osl_source":"server_usage",', ''), 'metadata.osl_source', /got nothing \(missing\)/],
    [
      good.replace(/}$/, ',"stream_integrity":{"usage_untrusted":["cached_tokens"]}}'),
      'stream_integrity.usage_untrusted',
      /expected a list of completion_tokens/,
    ],
    [
      good.replace('"turn_index":2', '"turn_index":"2"'),
      'metadata.turn_index',
      /expected an integer, got "2"/,
    ],
    [good.replace(/"request_end_ns":\d+/, '"request_end_ns":null'), 'metadata.request_end_ns', /got null/],
    [
      good.replace(/"request_start_ns":\d+/, '"request_start_ns":1.7e18'),
      'metadata.request_start_ns',
      /exactly/,
    ],
    [
      good.replace('"unit":"ms"}', '"unit":"ms","x":1}').replace('{"value":20.123456789', '{"v":1'),
      'metrics.time_to_first_token',
      /expected/,
    ],
    [
      good.replace('"error":null', '"error":{"code":500,"type":"E","message":"m","kind":"oops"}'),
      'error.kind',
      /one of/,
    ],
    [good.replace('[1,2.5,1e-7]', '[1,"2"]'), 'metrics.inter_chunk_latency.value[1]', /got "2"/],
  ];
  for (const [line, field, message] of cases) {
    const err = failureOf(line);
    assert.equal(err.field, field, line);
    assert.match(err.message, message);
    assert.equal(err.exitCode, 1);
  }
});
