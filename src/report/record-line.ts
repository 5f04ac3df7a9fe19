/**
 * Parsing one `profile_export.jsonl` line into a request with exact epoch-ns times. The times stay
 * absolute here; {@link toRequestPoint} converts them once the run's first start is known.
 */
import { readEpochNs, relativeSeconds } from './epoch-ns.js';
import type { RequestError, RequestPoint } from './types.js';

/** A parsed line before its times are made relative. Epoch ns, exact. */
export interface ParsedLine {
  scheduledNs: bigint | null;
  startNs: bigint;
  ackNs: bigint | null;
  endNs: bigint;
  point: Omit<RequestPoint, 'scheduledS' | 'startS' | 'ackS' | 'endS'>;
  /** The record's `inter_chunk_latency` list, ms (one per chunk gap); null when it has none. */
  interChunkLatencyMs: number[] | null;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Scalar value of metric `tag`, or undefined when missing or a list. */
function metricValue(metrics: Json, tag: string): number | undefined {
  const entry = metrics[tag];
  if (!isObject(entry)) return undefined;
  return typeof entry.value === 'number' ? entry.value : undefined;
}

function parseError(value: unknown): RequestError | null {
  if (!isObject(value)) return null;
  return {
    code: typeof value.code === 'number' ? value.code : 0,
    type: typeof value.type === 'string' ? value.type : 'Error',
    message: typeof value.message === 'string' ? value.message : '',
    kind: typeof value.kind === 'string' ? value.kind : '',
  };
}

function metricsOf(
  metrics: Json,
): Pick<
  RequestPoint,
  | 'ttftMs'
  | 'itlMs'
  | 'latencyMs'
  | 'isl'
  | 'osl'
  | 'scheduleLagMs'
  | 'connectionWaitMs'
  | 'cachedTokens'
  | 'idealCachedTokens'
> {
  return {
    ttftMs: metricValue(metrics, 'time_to_first_token'),
    itlMs: metricValue(metrics, 'inter_token_latency'),
    latencyMs: metricValue(metrics, 'request_latency'),
    isl: metricValue(metrics, 'input_sequence_length'),
    osl: metricValue(metrics, 'output_sequence_length'),
    scheduleLagMs: metricValue(metrics, 'schedule_lag'),
    connectionWaitMs: metricValue(metrics, 'connection_wait'),
    cachedTokens: metricValue(metrics, 'usage_cached_tokens'),
    idealCachedTokens: metricValue(metrics, 'ideal_cached_tokens'),
  };
}

/** The numbers of list metric `tag`, or null when missing or not a list. */
function metricList(metrics: Json, tag: string): number[] | null {
  const entry = metrics[tag];
  if (!isObject(entry) || !Array.isArray(entry.value)) return null;
  return entry.value.filter((v): v is number => typeof v === 'number');
}

/**
 * Parses one JSONL line.
 * @returns null for a blank line.
 * @throws {Error} with a short reason when the line is not JSON or lacks `request_start_ns` /
 *   `request_end_ns` integers.
 */
export function parseRecordLine(line: string): ParsedLine | null {
  if (line.trim().length === 0) return null;
  const root: unknown = JSON.parse(line);
  if (!isObject(root) || !isObject(root.metadata)) throw new Error('no "metadata" object');
  const startNs = readEpochNs(line, 'request_start_ns');
  const endNs = readEpochNs(line, 'request_end_ns');
  if (startNs === null || endNs === null) throw new Error('request_start_ns/request_end_ns missing');
  const meta = root.metadata;
  const metrics = isObject(root.metrics) ? root.metrics : {};
  return {
    scheduledNs: readEpochNs(line, 'request_scheduled_ns'),
    startNs,
    ackNs: readEpochNs(line, 'request_ack_ns'),
    endNs,
    point: {
      sessionNum: typeof meta.session_num === 'number' ? meta.session_num : 0,
      conversationId: typeof meta.conversation_id === 'string' ? meta.conversation_id : '',
      turnIndex: typeof meta.turn_index === 'number' ? meta.turn_index : 0,
      requestType: typeof meta.request_type === 'string' ? meta.request_type : null,
      cancelled: meta.was_cancelled === true,
      error: parseError(root.error),
      ...metricsOf(metrics),
    },
    interChunkLatencyMs: metricList(metrics, 'inter_chunk_latency'),
  };
}

/** The {@link RequestPoint} of a parsed line, times in seconds since `t0Ns`. */
export function toRequestPoint(parsed: ParsedLine, t0Ns: bigint): RequestPoint {
  const rel = (ns: bigint | null): number | null => (ns === null ? null : relativeSeconds(ns, t0Ns));
  return {
    ...parsed.point,
    scheduledS: rel(parsed.scheduledNs),
    startS: relativeSeconds(parsed.startNs, t0Ns),
    ackS: rel(parsed.ackNs),
    endS: relativeSeconds(parsed.endNs, t0Ns),
  };
}
