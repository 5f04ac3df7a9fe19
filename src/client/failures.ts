/**
 * Failure records and transport-error classification. Kinds and codes follow the SSE fixture format
 * (FORMAT.md §6.3) and AIPerf's error conventions (AIPerf reference §4.1, §8): HTTP status codes as
 * is, 502 for in-band errors and broken streams, 408 for our timeout, 499 for a cancellation.
 * Connection failures have no HTTP status; we record 503 (connect) and 502 (reset), the codes a
 * gateway would report for the same upstream failure.
 */
import type { ErrorKind, RecordError } from '../record/types.js';

/** Code recorded for an in-band error whose payload carries no 400–599 code (AIPerf). */
export const IN_BAND_DEFAULT_CODE = 502;
/** Code recorded when our own request timeout fires. */
export const TIMEOUT_CODE = 408;
/** Code recorded for a client cancellation (AIPerf `RequestCancellationError`). */
export const CANCELLED_CODE = 499;

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

/** Builds a {@link RecordError}. */
export function recordError(
  kind: ErrorKind,
  code: number,
  type: string,
  message: string,
  failedAtNs: number,
): RecordError {
  return { kind, code, type, message, failedAtNs };
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** True when the error (or one of its causes) is a TCP reset. */
export function isResetError(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    const code = errorCode(current);
    if (code !== undefined && RESET_CODES.has(code)) return true;
    if (code === 'UND_ERR_SOCKET' && /\breset\b/i.test(String((current as Error).message))) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/**
 * Classifies a transport error that ended a request before completion.
 * - a reset (`ECONNRESET`, `EPIPE`, an undici socket error caused by one) → `connection_reset`;
 * - no response headers yet (refused, DNS, connect timeout, closed before answering) → `connection_error`;
 * - otherwise the body broke off, e.g. undici's "other side closed" for a truncated chunked body →
 *   `stream_incomplete`.
 */
export function transportFailure(err: unknown, headersSeen: boolean, atNs: number): RecordError {
  const name = errorCode(err) ?? (err instanceof Error ? err.name : 'Error');
  const message = err instanceof Error ? describe(err) : String(err);
  if (isResetError(err)) return recordError('connection_reset', 502, name, message, atNs);
  if (!headersSeen) return recordError('connection_error', 503, name, message, atNs);
  return recordError('stream_incomplete', 502, name, `body ended before completion: ${message}`, atNs);
}

function describe(err: Error): string {
  const cause = (err as { cause?: unknown }).cause;
  return cause instanceof Error && cause.message !== err.message
    ? `${err.message} (${cause.message})`
    : err.message;
}
