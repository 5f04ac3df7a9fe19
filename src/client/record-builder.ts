/**
 * Turns the events of one HTTP exchange (headers, timed body reads, end or failure) into a
 * {@link RawRecord}. Transport-agnostic: the HTTP client stamps times and calls in; this file owns
 * SSE/JSON handling and collects what the failure classification reads; the classification itself
 * (`test/fixtures/sse/FORMAT.md` §6.3, first match wins) is `finishRecord` in record/failure.ts.
 */
import { STATUS_CODES } from 'node:http';
import { asObject, asText, httpLikeCode } from '../endpoint/parse-common.js';
import type { ParsedResponse, StreamScratch } from '../endpoint/types.js';
import { failedRecord, finishRecord, type Outcome, recordError, type StopReason } from '../record/failure.js';
import { emptyRecord } from '../record/raw-record.js';
import { CUMULATIVE_MIN_CHUNKS, settleCumulative } from '../record/stream-integrity.js';
import { ToolCallAssembler } from '../record/tool-calls.js';
import type { RawRecord, RecordError } from '../record/types.js';
import { MAX_EVENT_BYTES, SseDecoder, type SseSink } from './sse-decoder.js';
import type { SendRequest } from './types.js';

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

const DONE = '[DONE]';

/** Bytes of a 200 body kept to show in an `unreadable_body` error. */
const HEAD_BYTES = 64;

/** True when `bytes` holds only spaces, tabs and line breaks. */
function isBlank(bytes: Buffer): boolean {
  for (const byte of bytes)
    if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d) return false;
  return true;
}

const SSE_FIELDS = ['data', 'event', 'id', 'retry'];

/**
 * True when the first non-blank line of `head` is an SSE line: a comment (`:`) or a `data`,
 * `event`, `id` or `retry` field (FORMAT.md §6.3 `unreadable_body`). An HTML page or a proxy's
 * plain-text error is not, whatever its content type says.
 */
function startsLikeSse(head: Buffer): boolean {
  let i = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
  while (i < head.length && (head[i] === 0x0a || head[i] === 0x0d)) i++;
  if (head[i] === 0x3a) return true;
  for (const name of SSE_FIELDS) {
    const after = i + name.length;
    if (head.toString('latin1', i, after) !== name) continue;
    const next = head[after];
    if (next === undefined || next === 0x3a || next === 0x0a || next === 0x0d) return true;
  }
  return false;
}

/** True when `bytes[start, end)` is exactly `[DONE]` (other spellings take the text path). */
function isDone(bytes: Buffer, start: number, end: number): boolean {
  if (end - start !== DONE.length) return false;
  for (let i = 0; i < DONE.length; i++) if (bytes[start + i] !== DONE.charCodeAt(i)) return false;
  return true;
}

/**
 * Whether every choice seen so far carries a finish reason (sticky per choice index): choice 0, in
 * practice nearly always the only one, in one field, any other index in a Map made on first need.
 * Gives the answers of one `Map<index, finished>` without a Map lookup or iterator per event.
 */
class ChoiceFinish {
  /** Choice 0: 0 not seen, 1 seen and unfinished, 2 finished. */
  private first = 0;
  private others: Map<number, boolean> | null = null;

  /** Choice `index` was seen, with a finish reason when `finished`. */
  note(index: number, finished: boolean): void {
    if (index === 0) {
      if (this.first !== 2) this.first = finished ? 2 : 1;
      return;
    }
    this.others ??= new Map();
    this.others.set(index, this.others.get(index) === true || finished);
  }

  /** True when at least one choice was seen and every one finished. */
  allFinished(): boolean {
    if (this.first === 1) return false;
    if (this.others === null) return this.first === 2;
    for (const finished of this.others.values()) if (!finished) return false;
    return true;
  }
}

/** Accumulates one request's observations; finalize with {@link RecordBuilder.end} or {@link RecordBuilder.stop}. */
export class RecordBuilder implements SseSink {
  readonly raw: RawRecord;
  private mode: BodyMode = 'sse';
  /**
   * A 200 answer to a stream request whose content type is neither an event stream nor JSON (none,
   * `text/plain`): its first non-blank byte decides. An event stream starts with a field name or a
   * comment, never `{` or `[`; a body that does is one JSON answer.
   */
  private sniffing = false;
  private decoder: SseDecoder | null = null;
  /** Body reads of a JSON or error body (null until the first one). */
  private bodyParts: Buffer[] | null = null;
  private doneSeen = false;
  private inBand: RecordError | undefined;
  /** A bug on our side (an adapter that threw); reported, never hidden. */
  private clientError: RecordError | undefined;
  private readonly choiceFinish = new ChoiceFinish();
  /** The reply's tool calls, from the first event that carried one (null: none yet, the usual case). */
  private tools: ToolCallAssembler | null = null;
  private statusText = '';
  /** The adapter's per-stream state for its `parseBytes` fast path. */
  private readonly scratch: StreamScratch = { memo: undefined };
  private retryAfter: string | undefined;
  /** The content type as sent ('' when none). */
  private contentType = '';
  /** The first {@link HEAD_BYTES} bytes of a 200 body, and whether more followed. */
  private head: Buffer | null = null;
  private headTruncated = false;
  /** An SSE event (data or error) was decoded. */
  private eventSeen = false;
  /** A whole body was not JSON. */
  private jsonFailed = false;
  /**
   * The event that ended the stream's reading: one whose data is not JSON (`malformed_event`), or
   * one over the client's event size cap (`event_too_large`). Nothing after it is decoded, and the
   * record ends at its arrival.
   */
  private fatal: RecordError | undefined;

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
    this.contentType = String(headers['content-type'] ?? '').trim();
    const contentType = this.contentType.toLowerCase();
    if (status !== 200) this.mode = 'error-body';
    else if (contentType.includes('text/event-stream')) this.mode = 'sse';
    else if (contentType.includes('json')) this.mode = 'json';
    else this.mode = this.request.stream ? 'sse' : 'json';
    this.raw.responseStreamed = status === 200 ? this.mode === 'sse' : null;
    this.sniffing = this.raw.responseStreamed === true && !contentType.includes('text/event-stream');
    if (this.mode === 'sse') this.decoder = new SseDecoder();
  }

  /** One body read, stamped by the caller at arrival. */
  onData(bytes: Buffer, atNs: number): void {
    if (this.mode !== 'error-body' && !this.headTruncated) this.keepHead(bytes);
    if (this.sniffing) this.sniff(bytes);
    if (this.decoder === null) {
      this.bodyParts ??= [];
      this.bodyParts.push(bytes);
      return;
    }
    if (this.fatal !== undefined) return;
    this.decoder.feed(bytes, atNs, this);
    if (this.decoder.oversizedBytes > 0) this.setOversized(this.decoder.oversizedBytes, atNs);
  }

  /**
   * True once an event ended the stream's reading (see `fatal`): the caller may end the exchange
   * now ({@link RecordBuilder.end} gives the record as of that event).
   */
  get readingEnded(): boolean {
    return this.fatal !== undefined;
  }

  private setOversized(bytes: number, atNs: number): void {
    const capMiB = MAX_EVENT_BYTES / 1024 / 1024;
    const message =
      `an SSE event grew past the client's limit of ${capMiB} MiB per event (tokenload's cap, not a ` +
      `server error): ${bytes} bytes had arrived without the event's end when the client stopped reading`;
    this.fatal ??= recordError({ kind: 'event_too_large', message }, atNs);
  }

  /** Keeps the body's first {@link HEAD_BYTES} bytes (for {@link RecordBuilder.unreadable}). */
  private keepHead(bytes: Buffer): void {
    const have = this.head?.length ?? 0;
    const take = Math.min(bytes.length, HEAD_BYTES - have);
    if (take > 0) this.head = Buffer.concat([this.head ?? Buffer.alloc(0), bytes.subarray(0, take)]);
    if (take < bytes.length) this.headTruncated = true;
  }

  /**
   * A 200 body that ended holding neither an event stream (no SSE event, and no `text/event-stream`
   * content type) nor JSON, e.g. a proxy's HTML login page; undefined otherwise (a blank body is
   * `no_content`'s).
   */
  private unreadable(): Outcome['unreadable'] {
    if (this.mode === 'error-body' || this.head === null || isBlank(this.head)) return undefined;
    if (
      this.mode === 'json'
        ? !this.jsonFailed
        : this.eventSeen ||
          (this.contentType.toLowerCase().includes('text/event-stream') && startsLikeSse(this.head))
    )
      return undefined;
    this.raw.responseStreamed = false;
    return {
      kind: 'unreadable_body',
      contentType: this.contentType,
      head: this.head.toString('utf8'),
      truncated: this.headTruncated,
    };
  }

  /** Decides between an event stream and one JSON body on the first non-blank byte (see `sniffing`). */
  private sniff(bytes: Buffer): void {
    for (let i = 0; i < bytes.length; i++) {
      const byte = bytes[i] as number;
      if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
      this.sniffing = false;
      if (byte === 0x7b || byte === 0x5b) {
        this.mode = 'json';
        this.decoder = null;
        this.raw.responseStreamed = false;
      }
      return;
    }
  }

  /**
   * The body ended cleanly at `atNs` (or the caller ended it after {@link RecordBuilder.readingEnded});
   * returns the finished record.
   */
  end(atNs: number): RawRecord {
    if (this.fatal !== undefined) return this.finish(undefined, atNs);
    if (this.mode !== 'error-body') {
      if (this.mode === 'json') this.onWholeBody(atNs);
      else if (this.decoder !== null) this.decoder.finish(atNs, this);
      this.raw.streamEndNs ??= atNs;
    }
    return this.finish(undefined, atNs);
  }

  /** The request stopped at `atNs` before its body ended; returns the finished record. */
  stop(reason: StopReason, atNs: number): RawRecord {
    return this.finish(reason, atNs);
  }

  /** Failed on our side at `atNs` before any exchange (`client_error`); returns the finished record. */
  fail(type: string, message: string, atNs: number): RawRecord {
    return failedRecord(this.raw, type, message, atNs);
  }

  /** Hands what this exchange left to the classification (`finishRecord`). */
  private finish(stop: StopReason | undefined, atNs: number): RawRecord {
    settleCumulative(this.raw);
    if (this.tools !== null) {
      this.raw.toolReply = this.tools.reply();
      if (this.tools.cumulative) this.raw.cumulativeText = true;
    }
    const outcome: Outcome = {
      http: this.mode === 'error-body' ? this.httpFailure() : undefined,
      clientError: this.clientError,
      inBand: this.inBand,
      fatal: this.fatal,
      unreadable: stop === undefined ? this.unreadable() : undefined,
      stop,
      complete: this.isComplete(stop === undefined),
      stray: this.decoder?.strayLine ?? undefined,
    };
    const raw = finishRecord(this.raw, outcome, atNs);
    // A request that failed at an unreadable event ends there (FORMAT.md §6.3 `failedAtMs`).
    if (this.fatal !== undefined && raw.error === this.fatal) raw.endNs = this.fatal.failedAtNs;
    return raw;
  }

  private httpFailure(): Outcome['http'] {
    const status = this.raw.httpStatus ?? 0;
    const body = Buffer.concat(this.bodyParts ?? []).toString('utf8');
    return { kind: 'http_status', status, reason: this.statusText, body, retryAfter: this.retryAfter };
  }

  /** [DONE] seen, or (after a clean end) every choice seen carries a finish_reason. */
  private isComplete(cleanEnd: boolean): boolean {
    if (this.doneSeen) return true;
    if (!cleanEnd) return false;
    if (this.mode === 'json') return true;
    return this.choiceFinish.allFinished();
  }

  /** {@link SseSink}: an event whose data is one line of the current read (parsed in place when possible). */
  onEventBytes(event: string, bytes: Buffer, start: number, end: number, atNs: number): void {
    this.eventSeen = true;
    if (this.fatal !== undefined) return;
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
    this.eventSeen = true;
    if (this.fatal !== undefined) return;
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
      this.setMalformed(data, atNs);
      return;
    }
    this.parseAndApply(json, true, atNs);
  }

  /** An event whose data is not JSON ends the stream's reading (FORMAT.md §6.3 `malformed_event`). */
  private setMalformed(data: string, atNs: number): void {
    const head = JSON.stringify(data.slice(0, HEAD_BYTES)) + (data.length > HEAD_BYTES ? '…' : '');
    const message = `an SSE data event is not JSON (${data.length} characters); it starts ${head}`;
    this.fatal ??= recordError({ kind: 'malformed_event', message }, atNs);
  }

  private onWholeBody(atNs: number): void {
    const text = Buffer.concat(this.bodyParts ?? []).toString('utf8');
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.raw.parseErrors += 1;
      this.jsonFailed = true;
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
    this.clientError ??= recordError({ kind: 'client_error', type: 'AdapterError', message }, atNs);
  }

  private apply(parsed: ParsedResponse, atNs: number): void {
    if (parsed.error !== null)
      this.setInBand(parsed.error.message, parsed.error.code, parsed.error.type, atNs);
    if (parsed.streamEnd === true) {
      this.doneSeen = true;
      this.raw.streamEndNs ??= atNs;
    }
    if (parsed.usage !== null)
      this.raw.usage = parsed.usageMerges === true ? { ...this.raw.usage, ...parsed.usage } : parsed.usage;
    if (parsed.finishReason !== null) this.raw.finishReason = parsed.finishReason;
    // The server's own timing rides on one object (the last); kept beside the client's times.
    if (parsed.serverTiming !== undefined) this.raw.serverTiming = parsed.serverTiming;
    const choices = parsed.choices;
    if (choices !== undefined) {
      for (let i = 0; i < choices.length; i++) {
        const choice = choices[i] as { index: number; finishReason: string | null };
        this.choiceFinish.note(choice.index, choice.finishReason !== null);
      }
    } else if (parsed.finishReason !== null) this.choiceFinish.note(0, true);
    if (parsed.toolCalls !== undefined) this.noteToolCalls(parsed);
    else if (this.tools !== null) this.tools.addContent(parsed.text);
    if (parsed.text === '' && parsed.reasoning === '' && parsed.nonTokenContent !== true) return;
    const chunk: RawRecord['chunks'][number] = { atNs, text: parsed.text, reasoning: parsed.reasoning };
    const running = parsed.usage?.completion_tokens;
    if (typeof running === 'number') chunk.usageCompletionTokens = running;
    this.raw.chunks.push(chunk);
    if (this.raw.chunks.length === 1) this.request.onFirstToken?.();
  }

  /**
   * Folds an object's tool call pieces into the reply's calls. The first such object starts them,
   * with the content text of the chunks before it (their texts are content alone: no tool calls).
   */
  private noteToolCalls(parsed: ParsedResponse): void {
    if (this.tools === null) {
      this.tools = new ToolCallAssembler(CUMULATIVE_MIN_CHUNKS);
      for (const chunk of this.raw.chunks) this.tools.addContent(chunk.text);
    }
    this.tools.addContent(parsed.content ?? '');
    for (const piece of parsed.toolCalls ?? []) this.tools.add(piece);
  }

  private setInBand(message: string, code: number | null, type: string | null, atNs: number): void {
    this.inBand ??= recordError({ kind: 'in_band_error', message, code, type }, atNs);
  }
}
