/**
 * `profile_export.jsonl`: one `{metadata, metrics, error}` line per request, appended as each request
 * completes (AIPerf per-record export). Timestamps are wall-clock epoch ns written as exact JSON
 * integers; metric values are in display units.
 */
import { metricByTag } from '../metrics/registry.js';
import type { ServerTimingSource } from '../record/server-timing.js';
import type { IslSource, LineRecord, OslSource, StreamIntegrity, Usage } from '../record/types.js';
import type { TimeBase } from '../timing/clock.js';
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
  /** The server the request went to, as `--url` gave it (tokenload's; several servers: request/servers.ts). */
  server_url: string | null;
  benchmark_phase: 'profiling';
  request_type: string | null;
  request_scheduled_ns: bigint | null;
  request_start_ns: bigint;
  /** When the request's last byte was handed to the socket (tokenload's; not in AIPerf). */
  request_sent_ns: bigint | null;
  /** Whether it went out on an already-open connection; null when it got none (tokenload's). */
  connection_reused: boolean | null;
  request_ack_ns: bigint | null;
  request_end_ns: bigint;
  /**
   * How the 200 answer came: true as an event stream, false as one whole body (in a streaming run:
   * the server ignored `stream: true`, and the line has no streaming metric); null without a 200
   * answer (tokenload's).
   */
  response_streamed: boolean | null;
  was_cancelled: boolean;
  /**
   * True when the run ended the request while it was in flight (the duration cut-off's grace or
   * Ctrl-C's ran out): its latency is right-censored at its elapsed time (tokenload's).
   */
  censored: boolean;
  /** The answer's last `finish_reason`; null when none came (tokenload's, as the rest below). */
  finish_reason: string | null;
  /** `max_tokens` (or `max_completion_tokens`) sent; null when none was. */
  requested_output_tokens: number | null;
  /** Prompt tokens tokenload built for the turn (templated with `--apply-chat-template`); null when unknown. */
  input_tokens: number | null;
  /** Client count of every message sent, history included (compared with `usage.prompt_tokens`); null when unknown. */
  sent_prompt_tokens: number | null;
  /** Roles of the messages sent with their counts (`user×2 assistant×1`); null for a verbatim payload. */
  prompt_layout: string | null;
  /** Where `input_sequence_length` came from: `server_usage` or `client_prompt`; null when ISL is unknown. */
  isl_source: IslSource | null;
  /** Where `output_sequence_length` came from: `server_usage`, `client_tokenizer` or `content_chunks`. */
  osl_source: OslSource;
  /** True when `--per-chunk-usage` was on but this ITL divided by OSL − 1. */
  itl_per_chunk_fallback: boolean;
  /** The server's last `usage` object, as it sent it; null when it sent none. */
  usage: Usage | null;
  /**
   * Where the line's `server_*` metrics came from (`vllm_metrics`, `llamacpp_timings`): the server's
   * own timing of the request; null when its answer carried none (tokenload's).
   */
  server_timing_source: ServerTimingSource | null;
  /**
   * The `session_id` of the `inputs.json` entry whose body this request is: `conversation_id` but for
   * a branch of a Bailian tree replay (`<root chat_id>/<chat_id>`); with `turn_index` it names the
   * request's turn uniquely (tokenload's).
   */
  session_id: string;
}

/** The part of {@link TimeBase} the writer needs: monotonic ns → epoch ns. */
export type EpochConverter = Pick<TimeBase, 'toEpochNs'>;

/**
 * One line of the file: metrics as `{tag: {value, unit}}`; error with our `kind` added, or null;
 * `stream_integrity` only when the request's stream or usage was not what it seemed (tokenload's,
 * record/stream-integrity.ts).
 */
export interface RecordLine {
  metadata: RecordLineMetadata;
  metrics: Record<string, { value: number | number[]; unit: string }>;
  error: { code: number; type: string; message: string; kind: string; retry_after?: string } | null;
  stream_integrity?: StreamIntegrity;
}

function metadataOf(record: LineRecord, time: EpochConverter): RecordLineMetadata {
  const raw = record.raw;
  return {
    session_num: raw.sessionNum,
    conversation_id: raw.conversationId,
    turn_index: raw.turnIndex,
    x_request_id: raw.xRequestId,
    x_correlation_id: raw.xCorrelationId,
    server_url: raw.serverUrl ?? null,
    benchmark_phase: 'profiling',
    request_type: raw.requestType ?? null,
    request_scheduled_ns: raw.scheduledNs === null ? null : time.toEpochNs(raw.scheduledNs),
    request_start_ns: time.toEpochNs(raw.startNs),
    request_sent_ns: raw.sentNs === null ? null : time.toEpochNs(raw.sentNs),
    connection_reused: raw.connectionReused,
    request_ack_ns: raw.ackNs === null ? null : time.toEpochNs(raw.ackNs),
    request_end_ns: time.toEpochNs(raw.endNs),
    response_streamed: raw.responseStreamed,
    was_cancelled: raw.cancelled,
    censored: raw.censored === true,
    finish_reason: raw.finishReason,
    requested_output_tokens: raw.requestedOutputTokens,
    input_tokens: raw.inputTokens,
    sent_prompt_tokens: raw.sentPromptTokens ?? null,
    prompt_layout: raw.promptLayout ?? null,
    isl_source: record.islSource ?? null,
    osl_source: record.oslSource,
    itl_per_chunk_fallback: record.itlPerChunkFallback === true,
    usage: raw.usage,
    server_timing_source: record.serverTimingSource ?? null,
    session_id: raw.sessionId ?? raw.conversationId,
  };
}

function metricsOf(record: LineRecord): RecordLine['metrics'] {
  const metrics: RecordLine['metrics'] = {};
  for (const tag in record.metrics) {
    const value = record.metrics[tag] as number | number[];
    metrics[tag] = { value, unit: metricByTag(tag)?.unit ?? '' };
  }
  return metrics;
}

/** The line's `error`: `{code, type, message}`, or null for a success. */
export function errorOf(record: LineRecord): RecordLine['error'] {
  const e = record.raw.error;
  if (e === null) return null;
  const base = { code: e.code, type: e.type, message: e.message, kind: e.kind };
  return e.retryAfter === undefined ? base : { ...base, retry_after: e.retryAfter };
}

/** The {@link RecordLine} of a processed record. */
export function toRecordLine(record: LineRecord, time: EpochConverter): RecordLine {
  const line: RecordLine = {
    metadata: metadataOf(record, time),
    metrics: metricsOf(record),
    error: errorOf(record),
  };
  if (record.streamIntegrity !== undefined) line.stream_integrity = record.streamIntegrity;
  return line;
}

/** A JSON integer for an epoch-ns bigint, or `null`. */
function nsText(value: bigint | null): string {
  return value === null ? 'null' : value.toString();
}

/** `"metadata":{…}` text; key order matches {@link RecordLineMetadata}. */
export function metadataText(record: LineRecord, time: EpochConverter): string {
  const raw = record.raw;
  const scheduled = raw.scheduledNs === null ? null : time.toEpochNs(raw.scheduledNs);
  const ack = raw.ackNs === null ? null : time.toEpochNs(raw.ackNs);
  const sent = raw.sentNs === null ? null : time.toEpochNs(raw.sentNs);
  return (
    `{"session_num":${JSON.stringify(raw.sessionNum)},"conversation_id":${JSON.stringify(raw.conversationId)}` +
    `,"turn_index":${JSON.stringify(raw.turnIndex)},"x_request_id":${JSON.stringify(raw.xRequestId)}` +
    `,"x_correlation_id":${JSON.stringify(raw.xCorrelationId)},"server_url":${JSON.stringify(raw.serverUrl ?? null)}` +
    `,"benchmark_phase":"profiling"` +
    `,"request_type":${JSON.stringify(raw.requestType ?? null)},"request_scheduled_ns":${nsText(scheduled)}` +
    `,"request_start_ns":${nsText(time.toEpochNs(raw.startNs))},"request_sent_ns":${nsText(sent)}` +
    `,"connection_reused":${raw.connectionReused},"request_ack_ns":${nsText(ack)}` +
    `,"request_end_ns":${nsText(time.toEpochNs(raw.endNs))},"response_streamed":${raw.responseStreamed}` +
    `,"was_cancelled":${raw.cancelled},"censored":${raw.censored === true},"finish_reason":${JSON.stringify(raw.finishReason)}` +
    `,"requested_output_tokens":${JSON.stringify(raw.requestedOutputTokens)}` +
    `,"input_tokens":${JSON.stringify(raw.inputTokens)},"sent_prompt_tokens":${JSON.stringify(raw.sentPromptTokens ?? null)}` +
    `,"prompt_layout":${JSON.stringify(raw.promptLayout ?? null)},"isl_source":${JSON.stringify(record.islSource ?? null)}` +
    `,"osl_source":${JSON.stringify(record.oslSource)},"itl_per_chunk_fallback":${record.itlPerChunkFallback === true}` +
    `,"usage":${JSON.stringify(raw.usage)},"server_timing_source":${JSON.stringify(record.serverTimingSource ?? null)}` +
    `,"session_id":${JSON.stringify(raw.sessionId ?? raw.conversationId)}}`
  );
}

/** Per tag: `"tag":{"value":` and `,"unit":"…"}`, built once per tag. */
const metricParts = new Map<string, readonly [string, string]>();

function partsOf(tag: string): readonly [string, string] {
  let parts = metricParts.get(tag);
  if (parts === undefined) {
    parts = [`${JSON.stringify(tag)}:{"value":`, `,"unit":${JSON.stringify(metricByTag(tag)?.unit ?? '')}}`];
    metricParts.set(tag, parts);
  }
  return parts;
}

/** `{"tag":{"value":…,"unit":…},…}` text; same bytes as `JSON.stringify(metricsOf(record))`. */
function metricsText(record: LineRecord): string {
  let text = '';
  for (const tag in record.metrics) {
    const value = record.metrics[tag] as number | number[];
    const [head, tail] = partsOf(tag);
    const valueText =
      typeof value === 'number' ? (Number.isFinite(value) ? String(value) : 'null') : JSON.stringify(value);
    text += `${text === '' ? '' : ','}${head}${valueText}${tail}`;
  }
  return `{${text}}`;
}

/**
 * The JSON text of one line, newline included; epoch ns are written as bare integers.
 * Built by hand rather than through a `JSON.stringify` replacer, which runs for every key of every
 * line, and this runs once per request on the client's event loop. The output is byte-identical to
 * `JSON.stringify(toRecordLine(record, time))` with bigints written as bare integers (the tests check
 * it against `stringifyWithBigInt`, test/helpers/json-bigint.ts).
 */
export function formatRecordLine(record: LineRecord, time: EpochConverter): string {
  const integrity = record.streamIntegrity;
  const tail = integrity === undefined ? '' : `,"stream_integrity":${JSON.stringify(integrity)}`;
  return `{"metadata":${metadataText(record, time)},"metrics":${metricsText(record)},"error":${JSON.stringify(errorOf(record))}${tail}}\n`;
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
  write(record: LineRecord): Promise<void> {
    return this.sink.write(formatRecordLine(record, this.time));
  }

  /** Flushes and closes the file. @throws the file's write error. */
  close(): Promise<void> {
    return this.sink.close();
  }
}
