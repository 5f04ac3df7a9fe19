/**
 * Turns the events of one HTTP exchange (headers, timed body reads, end or failure) into a
 * {@link RawRecord}. Transport-agnostic: the HTTP client stamps times and calls in; this file owns
 * SSE/JSON handling and the failure classification of FORMAT.md §6.3 (first match wins):
 * http_status, in_band_error, timeout, connection_reset, stream_incomplete, no_content.
 */
import { STATUS_CODES } from 'node:http';
import { asObject, asText, httpLikeCode } from '../endpoint/parse-common.js';
import type { ParsedResponse, StreamScratch } from '../endpoint/types.js';
import type { RawRecord, RecordError, RequestIdentity } from '../record/types.js';
import {
  CANCELLED_CODE,
  IN_BAND_DEFAULT_CODE,
  recordError,
  TIMEOUT_CODE,
  transportFailure,
} from './failures.js';
import { SseDecoder, type SseSink } from './sse-decoder.js';
import type { SendRequest } from './types.js';

/** Why a request stopped before its body ended. */
export type StopReason =
  | { kind: 'timeout'; timeoutMs: number }
  | { kind: 'cancelled'; reason?: unknown }
  | { kind: 'transport'; error: unknown };

type BodyMode = 'sse' | 'json' | 'error-body';

/**
 * Message, code and type of an `event: error` event (AIPerf: fails the request, code 502 unless the
 * payload carries a 400–599 code). JSON payloads give `error.message` or `message`; else the raw data.
 */
function errorEventDetails(data: string): { message: string; code: number | null; type: string | null } {
  let json: unknown;
  try {
    json = JSON.parse(data);
  } catch {
    return { message: data === '' ? 'error event' : data, code: null, type: null };
  }
  const body = asObject(json);
  const inner = asObject(body?.error) ?? body;
  const message = asText(inner?.message) || asText(body?.error) || data;
  return { message, code: httpLikeCode(inner?.code), type: asText(inner?.type) || null };
}

/** A record of `identity` with nothing observed yet (start and end 0, no chunks, no error). */
export function emptyRecord(id: RequestIdentity): RawRecord {
  const raw: RawRecord = {
    conversationId: id.conversationId,
    turnIndex: id.turnIndex,
    sessionNum: id.sessionNum,
    xRequestId: id.xRequestId,
    xCorrelationId: id.xCorrelationId,
    model: id.model,
    scheduledNs: id.scheduledNs,
    startNs: 0,
    ackNs: null,
    chunks: [],
    streamEndNs: null,
    endNs: 0,
    usage: null,
    finishReason: null,
    inputTokens: id.inputTokens,
    requestedOutputTokens: id.requestedOutputTokens,
    httpStatus: null,
    parseErrors: 0,
    error: null,
    cancelled: false,
  };
  if (id.requestType !== undefined) raw.requestType = id.requestType;
  return raw;
}

const DONE = '[DONE]';

/** True when `bytes[start, end)` is exactly `[DONE]` (other spellings take the text path). */
function isDone(bytes: Buffer, start: number, end: number): boolean {
  if (end - start !== DONE.length) return false;
  for (let i = 0; i < DONE.length; i++) if (bytes[start + i] !== DONE.charCodeAt(i)) return false;
  return true;
}

/** Accumulates one request's observations; finalize with {@link RecordBuilder.end} or {@link RecordBuilder.stop}. */
export class RecordBuilder implements SseSink {
  readonly raw: RawRecord;
  private mode: BodyMode = 'sse';
  private decoder: SseDecoder | null = null;
  private readonly bodyParts: Buffer[] = [];
  private doneSeen = false;
  private inBand: RecordError | null = null;
  /** A bug on our side (an adapter that threw); reported, never hidden. */
  private clientError: RecordError | null = null;
  private readonly choiceFinished = new Map<number, boolean>();
  private statusText = '';
  /** The adapter's per-stream state for its `parseBytes` fast path. */
  private readonly scratch: StreamScratch = { memo: undefined };
  private retryAfter: string | undefined;

  constructor(private readonly request: SendRequest) {
    this.raw = emptyRecord(request.identity);
  }

  /** Status line and headers arrived at `atNs`. `headers` has lower-case names. */
  onHeaders(
    status: number,
    headers: Record<string, string | string[] | undefined>,
    reason: string,
    atNs: number,
  ): void {
    this.raw.httpStatus = status;
    this.raw.ackNs = atNs;
    this.statusText = reason || STATUS_CODES[status] || `HTTP ${status}`;
    const retryAfter = headers['retry-after'];
    if (retryAfter !== undefined)
      this.retryAfter = Array.isArray(retryAfter) ? retryAfter.join(', ') : retryAfter;
    const contentType = String(headers['content-type'] ?? '').toLowerCase();
    if (status !== 200) this.mode = 'error-body';
    else if (contentType.includes('text/event-stream')) this.mode = 'sse';
    else if (contentType.includes('json')) this.mode = 'json';
    else this.mode = this.request.stream ? 'sse' : 'json';
    if (this.mode === 'sse') this.decoder = new SseDecoder();
  }

  /** One body read, stamped by the caller at arrival. */
  onData(bytes: Buffer, atNs: number): void {
    if (this.decoder === null) {
      this.bodyParts.push(bytes);
      return;
    }
    this.decoder.feed(bytes, atNs, this);
  }

  /** The body ended cleanly at `atNs`; returns the finished record. */
  end(atNs: number): RawRecord {
    if (this.mode === 'error-body') return this.finish(this.httpError(atNs), atNs);
    if (this.mode === 'json') this.onWholeBody(atNs);
    else if (this.decoder !== null) this.decoder.finish(atNs, this);
    this.raw.streamEndNs ??= atNs;
    if (this.clientError !== null) return this.finish(this.clientError, atNs);
    if (this.inBand !== null) return this.finish(this.inBand, atNs);
    if (!this.isComplete(true)) {
      const message = 'stream ended cleanly without [DONE] or a finish_reason on every choice';
      return this.finish(recordError('stream_incomplete', 502, 'StreamIncomplete', message, atNs), atNs);
    }
    return this.finish(this.noContent(), atNs);
  }

  /** The request stopped at `atNs` before its body ended; returns the finished record. */
  stop(reason: StopReason, atNs: number): RawRecord {
    if (this.raw.httpStatus !== null && this.raw.httpStatus !== 200)
      return this.finish(this.httpError(atNs), atNs);
    if (this.clientError !== null) return this.finish(this.clientError, atNs);
    if (this.inBand !== null) return this.finish(this.inBand, atNs);
    if (reason.kind === 'cancelled') this.raw.cancelled = true;
    if (this.isComplete(false)) return this.finish(this.noContent(), atNs);
    return this.finish(this.stopError(reason, atNs), atNs);
  }

  private stopError(reason: StopReason, atNs: number): RecordError {
    if (reason.kind === 'timeout') {
      const message = `no complete response within the ${reason.timeoutMs} ms request timeout`;
      return recordError('timeout', TIMEOUT_CODE, 'TimeoutError', message, atNs);
    }
    if (reason.kind === 'cancelled') {
      const why = reason.reason instanceof Error ? `: ${reason.reason.message}` : '';
      return recordError(
        'cancelled',
        CANCELLED_CODE,
        'RequestCancellationError',
        `request cancelled${why}`,
        atNs,
      );
    }
    return transportFailure(reason.error, this.raw.httpStatus !== null, atNs);
  }

  private finish(error: RecordError | null, atNs: number): RawRecord {
    this.raw.error = error;
    this.raw.endNs = atNs;
    return this.raw;
  }

  private httpError(atNs: number): RecordError {
    const status = this.raw.httpStatus ?? 0;
    const body = Buffer.concat(this.bodyParts).toString('utf8');
    const error = recordError(
      'http_status',
      status,
      this.statusText,
      body === '' ? this.statusText : body,
      atNs,
    );
    if (this.retryAfter !== undefined) error.retryAfter = this.retryAfter;
    return error;
  }

  private noContent(): RecordError | null {
    if (this.raw.chunks.length > 0) return null;
    const at = this.raw.streamEndNs ?? this.raw.endNs;
    return recordError('no_content', 502, 'NoContent', 'response completed without any content', at);
  }

  /** [DONE] seen, or (after a clean end) every choice seen carries a finish_reason. */
  private isComplete(cleanEnd: boolean): boolean {
    if (this.doneSeen) return true;
    if (!cleanEnd) return false;
    if (this.mode === 'json') return true;
    if (this.choiceFinished.size === 0) return false;
    for (const finished of this.choiceFinished.values()) if (!finished) return false;
    return true;
  }

  /** {@link SseSink}: an event whose data is one line of the current read (parsed in place when possible). */
  onEventBytes(event: string, bytes: Buffer, start: number, end: number, atNs: number): void {
    const adapter = this.request.adapter;
    if (event !== 'error' && adapter.parseBytes !== undefined && start < end && !isDone(bytes, start, end)) {
      let parsed: ParsedResponse | undefined;
      try {
        parsed = adapter.parseBytes(bytes, start, end, this.scratch);
      } catch (err) {
        this.adapterThrew(err, atNs);
        return;
      }
      if (parsed !== undefined) {
        this.apply(parsed, atNs);
        return;
      }
    }
    this.onEventText(event, bytes.toString('utf8', start, end), atNs);
  }

  /** {@link SseSink}: an event with decoded data. */
  onEventText(event: string, data: string, atNs: number): void {
    if (event === 'error') {
      const { message, code, type } = errorEventDetails(data);
      this.setInBand(message, code, type, atNs);
      return;
    }
    if (data === '') return;
    if (data === '[DONE]' || data.trim() === '[DONE]') {
      this.doneSeen = true;
      this.raw.streamEndNs ??= atNs;
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(data);
    } catch {
      this.raw.parseErrors += 1;
      return;
    }
    this.parseAndApply(json, true, atNs);
  }

  private onWholeBody(atNs: number): void {
    const text = Buffer.concat(this.bodyParts).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.raw.parseErrors += 1;
      return;
    }
    this.parseAndApply(json, false, atNs);
  }

  /** Runs the adapter; a throwing adapter (contract: never throws) becomes a `client_error`. */
  private parseAndApply(json: unknown, streaming: boolean, atNs: number): void {
    let parsed: ParsedResponse;
    try {
      parsed = this.request.adapter.parse(json, streaming);
    } catch (err) {
      this.adapterThrew(err, atNs);
      return;
    }
    this.apply(parsed, atNs);
  }

  private adapterThrew(err: unknown, atNs: number): void {
    const message = `endpoint adapter ${this.request.adapter.name} threw: ${String(err)}`;
    this.clientError ??= recordError('client_error', 0, 'AdapterError', message, atNs);
  }

  private apply(parsed: ParsedResponse, atNs: number): void {
    if (parsed.error !== null)
      this.setInBand(parsed.error.message, parsed.error.code, parsed.error.type, atNs);
    if (parsed.usage !== null) this.raw.usage = parsed.usage;
    if (parsed.finishReason !== null) this.raw.finishReason = parsed.finishReason;
    if (parsed.choices !== undefined) {
      for (const choice of parsed.choices) {
        const finished = this.choiceFinished.get(choice.index) === true || choice.finishReason !== null;
        this.choiceFinished.set(choice.index, finished);
      }
    } else if (parsed.finishReason !== null) this.choiceFinished.set(0, true);
    if (parsed.text === '' && parsed.reasoning === '' && parsed.nonTokenContent !== true) return;
    const chunk: RawRecord['chunks'][number] = { atNs, text: parsed.text, reasoning: parsed.reasoning };
    const running = parsed.usage?.completion_tokens;
    if (typeof running === 'number') chunk.usageCompletionTokens = running;
    this.raw.chunks.push(chunk);
  }

  private setInBand(message: string, code: number | null, type: string | null, atNs: number): void {
    if (this.inBand !== null) return;
    this.inBand = recordError(
      'in_band_error',
      code ?? IN_BAND_DEFAULT_CODE,
      type ?? 'InBandError',
      message,
      atNs,
    );
  }
}
