/**
 * Per-request failures, in one place: which observation becomes which {@link ErrorKind} (first
 * match wins, `test/fixtures/sse/FORMAT.md` §6.3), the code each kind is recorded with ({@link FAILURE_CODES}), and the
 * one function that finishes every record, failed or not ({@link finishRecord}).
 *
 * A failed request is a record with an error, never a thrown exception. Process-level errors (a bad
 * flag, an unreadable file) are `TokenloadError`s (`src/errors.ts`), a different thing.
 */
import type { ErrorKind, RawRecord, RecordError } from './types.js';

/**
 * The `error.code` of each failure kind: `'status'` means the response's own HTTP status. AIPerf
 * writes an error in `profile_export.jsonl` as `{code, type, message}` and sets `code` in three
 * cases only: a non-200 response (the status), an SSE error (502, or the payload's 400–599 code) and
 * a cancellation (499; AIPerf's `docs/metrics_reference.md` and `aiperf/common/models/` in
 * github.com/ai-dynamo/aiperf). For an exception it sets no code
 * (`ErrorDetails.from_exception` in `aiperf/common/models/error_models.py`: type and message only);
 * for those kinds the codes below are tokenload's, chosen as the status a gateway would report.
 */
export const FAILURE_CODES = {
  /** The non-200 status itself (as AIPerf). */
  http_status: 'status',
  /** 502, unless the error payload carries a 400–599 code, which is recorded instead (as AIPerf). */
  in_band_error: 502,
  /** 408 Request Timeout: our own request timeout fired (AIPerf: an exception, no code). */
  timeout: 408,
  /** 502 Bad Gateway: the connection was reset mid-request (AIPerf: an exception, no code). */
  connection_reset: 502,
  /** 502: the body ended before completion, as AIPerf records a chat stream without `[DONE]`. */
  stream_incomplete: 502,
  /** 502: a complete response without any content is no answer either (tokenload). */
  no_content: 502,
  /** 502: a 200 body that is neither an event stream nor JSON (a proxy's HTML page) is no answer (tokenload). */
  unreadable_body: 502,
  /** 502: an event of a 200 stream whose data is not JSON; what the server said is unknown (tokenload). */
  malformed_event: 502,
  /** 0 = no code: an event over the client's own size cap; the client's limit, not the server's error (tokenload). */
  event_too_large: 0,
  /** 503 Service Unavailable: no connection, or no response headers (AIPerf: an exception, no code). */
  connection_error: 503,
  /** 499, AIPerf's `RequestCancellationError` (`--request-cancellation-rate`). */
  cancelled: 499,
  /** 0 = no code: a failure on our side, never an answer of the server (AIPerf: no code). */
  client_error: 0,
} as const satisfies Record<ErrorKind, number | 'status'>;

/** Why a request stopped before its body ended: our timeout, a cancellation, or a transport error. */
export type StopReason =
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'cancelled'; reason?: unknown }
  | { kind: 'transport'; error: unknown };

/** One cause of failure as observed, before it is recorded as a {@link RecordError}. */
type Failure =
  /** A non-200 response; `reason` is the reason phrase, `body` the response body as text. */
  | { kind: 'http_status'; status: number; reason: string; body: string; retryAfter?: string | undefined }
  /** An error event or payload in a 200 response; `code` only when it is 400–599. */
  | { kind: 'in_band_error'; message: string; code: number | null; type: string | null }
  /** A failure on our side: an adapter that threw, a body that could not be built, a dead worker. */
  | { kind: 'client_error'; type: string; message: string }
  /** The body ended cleanly without `[DONE]` or a finish_reason on every choice. */
  /** `stray`: the start of a line of the body that was no SSE field (a proxy's page), if any. */
  | { kind: 'stream_incomplete'; stray?: string | undefined }
  | { kind: 'no_content' }
  /** An event whose data is not JSON (the message names its size and start). */
  | { kind: 'malformed_event'; message: string }
  /** An event over the client's size cap (the message names the cap and the size seen). */
  | { kind: 'event_too_large'; message: string }
  /**
   * A 200 body that ended cleanly but held neither an SSE event nor JSON: its content type (as sent,
   * '' when none) and its first bytes (bounded, as text).
   */
  | { kind: 'unreadable_body'; contentType: string; head: string; truncated: boolean }
  /** A transport error; `headersSeen` when the response headers had arrived before it. */
  | { kind: 'transport'; error: unknown; headersSeen: boolean }
  | Exclude<StopReason, { kind: 'transport' }>;

/** A {@link RecordError} of a kind whose code comes from {@link FAILURE_CODES}. */
function tableError(
  kind: Exclude<ErrorKind, 'http_status'>,
  type: string,
  message: string,
  failedAtNs: number,
): RecordError {
  return { kind, code: FAILURE_CODES[kind], type, message, failedAtNs };
}

/** The record error of `failure`, decided at monotonic ns `atNs`. */
export function recordError(failure: Failure, atNs: number): RecordError {
  switch (failure.kind) {
    case 'http_status': {
      const { status, reason, body } = failure;
      const error: RecordError = {
        kind: 'http_status',
        code: status,
        type: reason,
        message: body === '' ? reason : body,
        failedAtNs: atNs,
      };
      if (failure.retryAfter !== undefined) error.retryAfter = failure.retryAfter;
      return error;
    }
    case 'in_band_error': {
      const error = tableError('in_band_error', failure.type ?? 'InBandError', failure.message, atNs);
      if (failure.code !== null) error.code = failure.code;
      return error;
    }
    case 'client_error':
      return tableError('client_error', failure.type, failure.message, atNs);
    case 'stream_incomplete': {
      const stray =
        failure.stray === undefined
          ? ''
          : `; the stream held a line that is no SSE field: ${JSON.stringify(failure.stray)}`;
      const message = `stream ended cleanly without [DONE] or a finish_reason on every choice${stray}`;
      return tableError('stream_incomplete', 'StreamIncomplete', message, atNs);
    }
    case 'no_content':
      return tableError('no_content', 'NoContent', 'response completed without any content', atNs);
    case 'unreadable_body':
      return tableError('unreadable_body', 'UnreadableBody', unreadableMessage(failure), atNs);
    case 'malformed_event':
      return tableError('malformed_event', 'MalformedEvent', failure.message, atNs);
    case 'event_too_large':
      return tableError('event_too_large', 'EventTooLarge', failure.message, atNs);
    case 'timeout': {
      const message = `no complete response within the ${failure.timeoutMs} ms request timeout`;
      return tableError('timeout', 'TimeoutError', message, atNs);
    }
    case 'cancelled': {
      const why = failure.reason instanceof Error ? `: ${failure.reason.message}` : '';
      return tableError('cancelled', 'RequestCancellationError', `request cancelled${why}`, atNs);
    }
    case 'transport':
      return transportError(failure.error, failure.headersSeen, atNs);
  }
}

/**
 * `the 200 answer (content-type text/html) is neither an event stream nor JSON; its body starts
 * "<html>…"`: the first bytes JSON-escaped (control characters and quotes visible, never raw).
 */
function unreadableMessage(f: Extract<Failure, { kind: 'unreadable_body' }>): string {
  const type = f.contentType === '' ? 'no content-type' : `content-type ${f.contentType}`;
  const head = JSON.stringify(f.head) + (f.truncated ? '…' : '');
  return `the 200 answer (${type}) is neither an event stream nor JSON; its body starts ${head}`;
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error (or one of its causes) is a TCP reset. */
function isResetError(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const code = errorCode(current);
    if (code !== undefined && RESET_CODES.has(code)) return true;
    if (code === 'UND_ERR_SOCKET' && /\breset\b/i.test(String((current as Error).message))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

function describe(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== err.message
    ? `${err.message} (${cause.message})`
    : err.message;
}

/**
 * A transport error that ended a request before completion, first match wins:
 * - a reset (`ECONNRESET`, `EPIPE`, an undici socket error caused by one) → `connection_reset`;
 * - no response headers yet (refused, DNS, connect timeout, closed before answering) → `connection_error`;
 * - otherwise the body broke off, e.g. undici's "other side closed" for a truncated chunked body →
 *   `stream_incomplete`.
 * The type is the system error code (`ECONNREFUSED`, `UND_ERR_SOCKET`), else the error's name.
 */
function transportError(err: unknown, headersSeen: boolean, atNs: number): RecordError {
  const type = errorCode(err) ?? (err instanceof Error ? err.name : 'Error');
  const message = err instanceof Error ? describe(err) : String(err);
  if (isResetError(err)) return tableError('connection_reset', type, message, atNs);
  if (!headersSeen) return tableError('connection_error', type, message, atNs);
  return tableError('stream_incomplete', type, `body ended before completion: ${message}`, atNs);
}

/**
 * What a request left behind when it ended, as {@link finishRecord} reads it; an absent field was
 * not observed. A request that failed before any exchange has only `clientError`.
 */
export interface Outcome {
  /** The non-200 response. */
  http?: Extract<Failure, { kind: 'http_status' }>;
  /** The first failure on our side, stamped when it happened. */
  clientError?: RecordError;
  /** The first in-band error, stamped at its arrival. */
  inBand?: RecordError;
  /**
   * The event that ended the stream's reading (`malformed_event`, `event_too_large`), stamped at
   * its arrival; it wins over however the stream ended afterwards.
   */
  fatal?: RecordError | undefined;
  /** A 200 body that ended cleanly holding neither an event stream nor JSON. */
  unreadable?: Extract<Failure, { kind: 'unreadable_body' }>;
  /** Why the request stopped before its body ended; absent after a clean end of the body. */
  stop?: StopReason;
  /** `[DONE]` arrived, or the body ended cleanly with a finish_reason on every choice seen. */
  complete?: boolean;
  /** The start of the first line of an event stream that was no SSE field (shown if it breaks off). */
  stray?: string | undefined;
}

/**
 * Finishes `raw` at monotonic ns `endNs`: sets `endNs` and the error that wins, first match
 * (`test/fixtures/sse/FORMAT.md` §6.3 for the first and the last three):
 * 1. a non-200 status → `http_status`;
 * 2. a failure on our side → `client_error`;
 * 3. an in-band error → `in_band_error` (wins over however the stream ended afterwards);
 * 3a. an event whose data is not JSON → `malformed_event`, or one over the client's size cap →
 *    `event_too_large` (likewise);
 * 3b. a 200 body that was neither an event stream nor JSON → `unreadable_body`;
 * 4. not complete → why it stopped (`timeout`, `cancelled`, or a transport error: see
 *    `transportError`), or `stream_incomplete` after a clean end;
 * 5. complete without a content chunk → `no_content`;
 * otherwise no error. A cancellation that reached rule 4 also marks the record `cancelled`, even
 * when the response had completed. Every record the clients and the sender produce ends here.
 */
export function finishRecord(raw: RawRecord, outcome: Outcome, endNs: number): RawRecord {
  raw.endNs = endNs;
  if (outcome.http !== undefined) raw.error = recordError(outcome.http, endNs);
  else if (outcome.unreadable !== undefined)
    raw.error = outcome.clientError ?? outcome.inBand ?? recordError(outcome.unreadable, endNs);
  else raw.error = outcome.clientError ?? outcome.inBand ?? outcome.fatal ?? stopError(raw, outcome, endNs);
  return raw;
}

/** Rules 4 and 5 of {@link finishRecord}. */
function stopError(raw: RawRecord, outcome: Outcome, endNs: number): RecordError | null {
  const stop = outcome.stop;
  // Only a cancellation that reached this rule marks the record cancelled (see finishRecord).
  if (stop?.kind === 'cancelled') raw.cancelled = true;
  if (outcome.complete !== true) {
    if (stop === undefined) return recordError({ kind: 'stream_incomplete', stray: outcome.stray }, endNs);
    const failure = stop.kind === 'transport' ? { ...stop, headersSeen: raw.httpStatus !== null } : stop;
    return recordError(failure, endNs);
  }
  if (raw.chunks.length > 0) return null;
  return recordError({ kind: 'no_content' }, raw.streamEndNs ?? endNs);
}

/**
 * A record of `identity` that failed on our side before or instead of an exchange (`client_error`):
 * started at `startNs`, failed and finished at `atNs`. The sender's unbuildable requests and the
 * worker pool's lost ones end here; the record builder fails its own record the same way.
 */
export function failedRecord(raw: RawRecord, type: string, message: string, atNs: number): RawRecord {
  return finishRecord(raw, { clientError: recordError({ kind: 'client_error', type, message }, atNs) }, atNs);
}

/**
 * The error a record counts with in the statistics: its own; else `cancelled` when the client
 * cancelled it after the response had completed; else `no_content` when it has no content chunk
 * (a hand-built record: {@link finishRecord} already gives every finished record without content an
 * error). So every invalid record carries an error for the error summary.
 */
export function effectiveError(raw: RawRecord): RecordError | null {
  if (raw.error !== null) return raw.error;
  if (raw.cancelled) return recordError({ kind: 'cancelled' }, raw.endNs);
  if (raw.chunks.length === 0) return recordError({ kind: 'no_content' }, raw.streamEndNs ?? raw.endNs);
  return null;
}
