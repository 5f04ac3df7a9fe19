/**
 * Reading a `profile_export.jsonl` line back into the {@link LineRecord} it was written from
 * (export/jsonl-writer.ts): the inverse of `formatRecordLine`, exact, so that
 * `formatRecordLine(readRecordLine(line, ctx), ctx.time)` gives back the line byte for byte. This is
 * what lets `tokenload merge` recompute a run's summary from its records with the run's own code.
 *
 * Exactness: epoch-ns times exceed 2^53, so their digits are taken from the line's text (and
 * checked against the parsed value, so a look-alike key inside a string cannot be taken for them)
 * and mapped onto an {@link EpochBase}: integer ns since the first time it saw, exact for ±104 days.
 * A metric value written as `null` (a non-finite number) comes back as NaN.
 */
import { TokenloadError } from '../errors.js';
import { FAILURE_CODES } from '../record/failure.js';
import type { ServerTimingSource } from '../record/server-timing.js';
import type {
  ErrorKind,
  IslSource,
  LineError,
  LineRecord,
  OslSource,
  RecordMetrics,
  StreamIntegrity,
  Usage,
  UsageFault,
} from '../record/types.js';
import type { EpochConverter } from './jsonl-writer.js';

/** A line that is not a record line as tokenload writes it; `field` is the JSON path at fault. */
export class RecordLineError extends TokenloadError {
  override readonly name = 'RecordLineError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super('E_ARTIFACTS', field === '' ? message : `field ${field}: ${message}`);
  }
}

/**
 * Epoch ns ↔ ns numbers on one base: the first epoch time converted (or the one given) is 0. The
 * inverse of itself, so it is also the {@link EpochConverter} that writes the records back.
 */
export class EpochBase implements EpochConverter {
  constructor(private base: bigint | null = null) {}

  /** The epoch ns that maps to 0; null before the first conversion. */
  get baseEpochNs(): bigint | null {
    return this.base;
  }

  /**
   * Integer ns since the base (negative before it).
   * @throws {RangeError} when `epochNs` is more than 2^53 ns (104 days) from the base.
   */
  fromEpochNs(epochNs: bigint): number {
    if (this.base === null) this.base = epochNs;
    const ns = Number(epochNs - this.base);
    if (!Number.isSafeInteger(ns))
      throw new RangeError(`${epochNs} ns is more than 104 days from ${this.base}`);
    return ns;
  }

  /** Epoch ns of `ns` (rounded to an integer), the writer's direction. */
  toEpochNs(ns: number): bigint {
    return (this.base ?? 0n) + BigInt(Math.round(ns));
  }
}

/** What reading a line needs besides the line. */
export interface RecordReadContext {
  /** Where its epoch-ns times go; share one across files to put their records on one axis. */
  time: EpochBase;
  /** Whether the run streamed (its `input_config.streaming`): decides `notStreamed`, as the record stage does. */
  streaming: boolean;
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function shown(value: unknown): string {
  return value === undefined ? 'nothing (missing)' : (JSON.stringify(value) ?? String(value));
}

/** Reads typed fields of one JSON object, naming `prefix.key` in its errors. */
class Fields {
  constructor(
    private readonly obj: Json,
    private readonly prefix: string,
  ) {}

  private fail(key: string, expected: string): never {
    throw new RecordLineError(`${this.prefix}.${key}`, `expected ${expected}, got ${shown(this.obj[key])}`);
  }

  int(key: string): number {
    const v = this.obj[key];
    return Number.isSafeInteger(v) ? (v as number) : this.fail(key, 'an integer');
  }

  intOrNull(key: string): number | null {
    return this.obj[key] === null ? null : this.int(key);
  }

  /** An epoch-ns integer as `JSON.parse` read it (beyond 2^53: rounded; the exact digits come from the text). */
  epochOrNull(key: string): number | null {
    const v = this.obj[key];
    if (v === null) return null;
    return Number.isInteger(v) && (v as number) >= 0
      ? (v as number)
      : this.fail(key, 'an integer of epoch ns');
  }

  str(key: string): string {
    const v = this.obj[key];
    return typeof v === 'string' ? v : this.fail(key, 'a string');
  }

  strOrNull(key: string): string | null {
    return this.obj[key] === null ? null : this.str(key);
  }

  bool(key: string): boolean {
    const v = this.obj[key];
    return typeof v === 'boolean' ? v : this.fail(key, 'true or false');
  }

  /** Whether the object has `key` at all (a field newer than some files). */
  has(key: string): boolean {
    return key in this.obj;
  }

  boolOrNull(key: string): boolean | null {
    return this.obj[key] === null ? null : this.bool(key);
  }

  oneOf<T extends string>(key: string, values: readonly T[]): T {
    const v = this.obj[key];
    return values.includes(v as T) ? (v as T) : this.fail(key, `one of ${values.join(', ')}`);
  }

  objectOrNull(key: string): Json | null {
    const v = this.obj[key];
    if (v === null) return null;
    return isObject(v) ? v : this.fail(key, 'an object or null');
  }
}

const ISL_SOURCES: readonly IslSource[] = ['server_usage', 'client_prompt'];
const OSL_SOURCES: readonly OslSource[] = ['server_usage', 'client_tokenizer', 'content_chunks'];
const SERVER_TIMING_SOURCES: readonly ServerTimingSource[] = ['vllm_metrics', 'llamacpp_timings'];
const ERROR_KINDS = Object.keys(FAILURE_CODES) as ErrorKind[];

const keyPatterns = new Map<string, RegExp>();

/**
 * The exact integer of metadata key `key`: the digits of its first occurrence as a key in `line`
 * (metadata comes first in a line), which must round to `approx`, the value `JSON.parse` gave.
 */
function exactInteger(line: string, key: string, approx: number): bigint {
  let re = keyPatterns.get(key);
  if (re === undefined) {
    re = new RegExp(`[{,]\\s*"${key}"\\s*:\\s*(-?\\d+)\\s*[,}]`);
    keyPatterns.set(key, re);
  }
  const digits = re.exec(line)?.[1];
  const exact = digits === undefined ? null : BigInt(digits);
  if (exact === null || Number(exact) !== approx)
    throw new RecordLineError(`metadata.${key}`, 'its digits could not be read exactly');
  return exact;
}

/** An epoch-ns field as ns on the context's base; null when the line has null (and `nullable`). */
function nsField(line: string, meta: Fields, key: string, time: EpochBase, nullable: boolean): number | null {
  const approx = meta.epochOrNull(key);
  if (approx === null) {
    if (nullable) return null;
    throw new RecordLineError(`metadata.${key}`, 'expected an integer of epoch ns, got null');
  }
  try {
    return time.fromEpochNs(exactInteger(line, key, approx));
  } catch (err) {
    if (err instanceof RangeError) throw new RecordLineError(`metadata.${key}`, err.message);
    throw err;
  }
}

/** The times of a line, on the context's base. */
function timesOf(line: string, meta: Fields, time: EpochBase) {
  const startNs = nsField(line, meta, 'request_start_ns', time, false) as number;
  return {
    scheduledNs: nsField(line, meta, 'request_scheduled_ns', time, true),
    startNs,
    sentNs: nsField(line, meta, 'request_sent_ns', time, true),
    ackNs: nsField(line, meta, 'request_ack_ns', time, true),
    endNs: nsField(line, meta, 'request_end_ns', time, false) as number,
  };
}

/** Adds `key: value` to `target` unless `value` is null (the writer's `?? null` reversed). */
function setIfNotNull<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | null): void {
  if (value !== null) target[key] = value;
}

function rawOf(
  line: string,
  meta: Fields,
  ctx: RecordReadContext,
  error: LineError | null,
): LineRecord['raw'] {
  const raw: LineRecord['raw'] = {
    sessionNum: meta.int('session_num'),
    conversationId: meta.str('conversation_id'),
    turnIndex: meta.int('turn_index'),
    xRequestId: meta.str('x_request_id'),
    xCorrelationId: meta.str('x_correlation_id'),
    ...timesOf(line, meta, ctx.time),
    connectionReused: meta.boolOrNull('connection_reused'),
    responseStreamed: meta.boolOrNull('response_streamed'),
    cancelled: meta.bool('was_cancelled'),
    finishReason: meta.strOrNull('finish_reason'),
    requestedOutputTokens: meta.intOrNull('requested_output_tokens'),
    inputTokens: meta.intOrNull('input_tokens'),
    usage: meta.objectOrNull('usage') as Usage | null,
    error,
  };
  // Absent in files written before the field existed: such a record was not marked censored.
  if (meta.has('censored') && meta.bool('censored')) raw.censored = true;
  setIfNotNull(raw, 'serverUrl', meta.strOrNull('server_url'));
  setIfNotNull(raw, 'requestType', meta.strOrNull('request_type'));
  setIfNotNull(raw, 'sentPromptTokens', meta.intOrNull('sent_prompt_tokens'));
  setIfNotNull(raw, 'promptLayout', meta.strOrNull('prompt_layout'));
  // Absent in files written before the field existed; the writer's `?? conversationId` reversed.
  const session = meta.has('session_id') ? meta.str('session_id') : raw.conversationId;
  if (session !== raw.conversationId) raw.sessionId = session;
  return raw;
}

function metricValue(tag: string, value: unknown): number | number[] {
  if (value === null) return Number.NaN;
  if (typeof value === 'number') return value;
  if (Array.isArray(value)) {
    // Checked in place, not copied: a streamed answer's list has one value per chunk gap.
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (typeof v === 'number') continue;
      if (v !== null)
        throw new RecordLineError(`metrics.${tag}.value[${i}]`, `expected a number, got ${shown(v)}`);
      value[i] = Number.NaN;
    }
    return value as number[];
  }
  throw new RecordLineError(`metrics.${tag}.value`, `expected a number or a list, got ${shown(value)}`);
}

function metricsOf(value: unknown): RecordMetrics {
  if (!isObject(value)) throw new RecordLineError('metrics', `expected an object, got ${shown(value)}`);
  const metrics: RecordMetrics = {};
  for (const tag in value) {
    const entry = value[tag];
    if (!isObject(entry) || !('value' in entry))
      throw new RecordLineError(`metrics.${tag}`, `expected {"value": …, "unit": …}, got ${shown(entry)}`);
    metrics[tag] = metricValue(tag, entry.value);
  }
  return metrics;
}

function errorOf(value: unknown): LineError | null {
  if (value === null) return null;
  if (!isObject(value)) throw new RecordLineError('error', `expected an object or null, got ${shown(value)}`);
  const f = new Fields(value, 'error');
  const error: LineError = {
    code: f.int('code'),
    type: f.str('type'),
    message: f.str('message'),
    kind: f.oneOf('kind', ERROR_KINDS),
  };
  if (value.retry_after !== undefined) error.retryAfter = f.str('retry_after');
  return error;
}

/**
 * The record of one `profile_export.jsonl` line.
 * @param line - the line's text, without its newline.
 * @throws {RecordLineError} naming the field at fault (`metadata.request_start_ns`, `metrics.…`,
 *   `error.kind`) for anything tokenload's writer would not have written: not JSON, a missing or
 *   mistyped field (a line from a tokenload version without `osl_source`, `usage`, … included).
 */
export function readRecordLine(line: string, ctx: RecordReadContext): LineRecord {
  let root: unknown;
  try {
    root = JSON.parse(line);
  } catch (err) {
    throw new RecordLineError('', `not JSON (${(err as Error).message})`);
  }
  if (!isObject(root) || !isObject(root.metadata))
    throw new RecordLineError(
      'metadata',
      `expected an object, got ${shown(isObject(root) ? root.metadata : root)}`,
    );
  const meta = new Fields(root.metadata, 'metadata');
  const error = errorOf(root.error);
  const raw = rawOf(line, meta, ctx, error);
  const record: LineRecord = {
    raw,
    metrics: metricsOf(root.metrics),
    valid: error === null,
    oslSource: meta.oneOf('osl_source', OSL_SOURCES),
  };
  if (root.metadata.isl_source !== null) record.islSource = meta.oneOf('isl_source', ISL_SOURCES);
  if (meta.bool('itl_per_chunk_fallback')) record.itlPerChunkFallback = true;
  // Absent in files written before the field existed: such a record had no server timing.
  if (meta.has('server_timing_source') && root.metadata.server_timing_source !== null)
    record.serverTimingSource = meta.oneOf('server_timing_source', SERVER_TIMING_SOURCES);
  if (ctx.streaming && raw.responseStreamed === false) record.notStreamed = true;
  if (root.stream_integrity !== undefined) record.streamIntegrity = integrityOf(root.stream_integrity);
  return record;
}

const USAGE_FAULTS: readonly UsageFault[] = [
  'completion_tokens',
  'reasoning_tokens',
  'total_tokens',
  'prompt_tokens',
];

/** The line's `stream_integrity` (jsonl-writer.ts writes it only when something applied). */
function integrityOf(value: unknown): StreamIntegrity {
  if (!isObject(value))
    throw new RecordLineError('stream_integrity', `expected an object, got ${shown(value)}`);
  const out: StreamIntegrity = {};
  const f = new Fields(value, 'stream_integrity');
  if (value.buffered !== undefined) {
    if (!isObject(value.buffered))
      throw new RecordLineError(
        'stream_integrity.buffered',
        `expected an object, got ${shown(value.buffered)}`,
      );
    const b = new Fields(value.buffered, 'stream_integrity.buffered');
    out.buffered = {
      largest_burst_chunks: b.int('largest_burst_chunks'),
      zero_gaps: b.int('zero_gaps'),
      gaps: b.int('gaps'),
    };
  }
  if (value.cumulative !== undefined && f.bool('cumulative')) out.cumulative = true;
  const faults = value.usage_untrusted;
  if (faults !== undefined) {
    if (!Array.isArray(faults) || faults.some((x) => !USAGE_FAULTS.includes(x as UsageFault)))
      throw new RecordLineError(
        'stream_integrity.usage_untrusted',
        `expected a list of ${USAGE_FAULTS.join(', ')}, got ${shown(faults)}`,
      );
    out.usage_untrusted = faults as UsageFault[];
  }
  return out;
}
