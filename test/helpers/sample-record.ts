/**
 * A processed record of a streamed answer, to write as a `profile_export.jsonl` line and read back:
 * the exporter and record-reader tests start from it and change what they look at.
 */
import type { EpochConverter } from '../../src/export/jsonl-writer.js';
import type { ProcessedRecord } from '../../src/record/types.js';

/** Epoch origin far above 2^53 (9,007,199,254,740,992), so a Number on the way would round it. */
export const SAMPLE_ORIGIN_NS = 1_700_000_000_000_000_123n;

/** Monotonic ns → epoch ns on {@link SAMPLE_ORIGIN_NS}. */
export const SAMPLE_TIME: EpochConverter = { toEpochNs: (ns) => SAMPLE_ORIGIN_NS + BigInt(Math.round(ns)) };

/** A valid record (session 7, turn 2, TTFT 20 ms, two chunk gaps, no usage); `over` replaces raw fields. */
export function sampleRecord(over: Partial<ProcessedRecord['raw']> = {}): ProcessedRecord {
  return {
    raw: {
      conversationId: 'conv-1',
      turnIndex: 2,
      sessionNum: 7,
      xRequestId: 'req-9',
      xCorrelationId: 'corr-1',
      model: 'm',
      requestType: 'text',
      scheduledNs: 999_000_000,
      startNs: 1_000_000_000,
      sentNs: 1_000_400_000,
      connectionReused: false,
      connectDurationNs: 300_000,
      ackNs: 1_020_000_000,
      responseStreamed: true,
      chunkCount: 3,
      streamEndNs: 1_300_000_000,
      endNs: 1_300_000_001,
      usage: null,
      finishReason: 'stop',
      inputTokens: 10,
      requestedOutputTokens: 3,
      httpStatus: 200,
      parseErrors: 0,
      error: null,
      cancelled: false,
      ...over,
    },
    metrics: { time_to_first_token: 20, inter_chunk_latency: [1, 2] },
    valid: true,
    oslSource: 'client_tokenizer',
  };
}
