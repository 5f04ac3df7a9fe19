/**
 * `profile_export.jsonl`: one `{metadata, metrics, error}` line per request, appended as each request
 * completes (AIPerf per-record export). Timestamps are wall-clock epoch ns written as exact JSON
 * integers; metric values are in display units.
 */
import { metricByTag } from '../metrics/registry.js';
import type { ProcessedRecord } from '../record/types.js';
import type { TimeBase } from '../timing/clock.js';
import { stringifyWithBigInt } from './json-bigint.js';
import { LineSink } from './line-sink.js';

/** Default file name of the per-record export. */
export const RECORDS_FILE_NAME = 'profile_export.jsonl';

/** `metadata` object of one line. `*_ns` values are epoch ns (bigint, exact); null when unknown. */
export interface RecordLineMetadata {
  session_num: number;
  conversation_id: string;
  turn_index: number;
  x_request_id: string;
  x_correlation_id: string;
  benchmark_phase: 'profiling';
  request_type: string | null;
  request_scheduled_ns: bigint | null;
  request_start_ns: bigint;
  request_ack_ns: bigint | null;
  request_end_ns: bigint;
  was_cancelled: boolean;
}

/** The part of {@link TimeBase} the writer needs: monotonic ns → epoch ns. */
export type EpochConverter = Pick<TimeBase, 'toEpochNs'>;

/** One line of the file: metrics as `{tag: {value, unit}}`; error with our `kind` added, or null. */
export interface RecordLine {
  metadata: RecordLineMetadata;
  metrics: Record<string, { value: number | number[]; unit: string }>;
  error: { code: number; type: string; message: string; kind: string } | null;
}

function metadataOf(record: ProcessedRecord, time: EpochConverter): RecordLineMetadata {
  const raw = record.raw;
  return {
    session_num: raw.sessionNum,
    conversation_id: raw.conversationId,
    turn_index: raw.turnIndex,
    x_request_id: raw.xRequestId,
    x_correlation_id: raw.xCorrelationId,
    benchmark_phase: 'profiling',
    request_type: raw.requestType ?? null,
    request_scheduled_ns: raw.scheduledNs === null ? null : time.toEpochNs(raw.scheduledNs),
    request_start_ns: time.toEpochNs(raw.startNs),
    request_ack_ns: raw.ackNs === null ? null : time.toEpochNs(raw.ackNs),
    request_end_ns: time.toEpochNs(raw.endNs),
    was_cancelled: raw.cancelled,
  };
}

/** The {@link RecordLine} of a processed record. */
export function toRecordLine(record: ProcessedRecord, time: EpochConverter): RecordLine {
  const metrics: RecordLine['metrics'] = {};
  for (const [tag, value] of Object.entries(record.metrics)) {
    metrics[tag] = { value, unit: metricByTag(tag)?.unit ?? '' };
  }
  const e = record.raw.error;
  const error = e === null ? null : { code: e.code, type: e.type, message: e.message, kind: e.kind };
  return { metadata: metadataOf(record, time), metrics, error };
}

/** The JSON text of one line, newline included; epoch ns are written as bare integers. */
export function formatRecordLine(record: ProcessedRecord, time: EpochConverter): string {
  return `${stringifyWithBigInt(toRecordLine(record, time))}\n`;
}

/**
 * Streams records to a JSONL file as they complete. Each record is one `write` of a whole line, so the
 * file is valid JSONL (possibly shorter) after any interruption; `write` waits on backpressure.
 */
export class RecordWriter {
  private readonly sink: LineSink;

  /** Opens (truncating) `path`; `time` converts monotonic ns to epoch ns. */
  constructor(
    path: string,
    private readonly time: EpochConverter,
  ) {
    this.sink = new LineSink(path);
  }

  /** File path being written. */
  get path(): string {
    return this.sink.path;
  }

  /** Appends one record. @throws the file's write error. */
  write(record: ProcessedRecord): Promise<void> {
    return this.sink.write(formatRecordLine(record, this.time));
  }

  /** Flushes and closes the file. @throws the file's write error. */
  close(): Promise<void> {
    return this.sink.close();
  }
}
