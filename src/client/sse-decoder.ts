/**
 * Incremental decoder for `text/event-stream` bodies, following the WHATWG HTML standard,
 * "Server-sent events" § "Parsing an event stream" / "Interpreting an event stream".
 *
 * Design: bytes are decoded to text with one streaming `TextDecoder` (so a UTF-8 character split
 * across reads survives), then lines are found by index scanning, never by regex or `split`, with
 * one slice per line. Only the unfinished tail of a read is carried over to the next one.
 * Each dispatched event carries the arrival time of the read that held its terminating blank line;
 * the caller stamps that time once per read, before calling {@link SseDecoder.push}.
 */

/** One dispatched server-sent event. */
export interface SseEvent {
  /** Event type: the last `event:` field of the event, or `message` when there was none. */
  event: string;
  /** The event's `data:` lines joined with `\n` (no trailing newline). */
  data: string;
  /** Monotonic ns arrival of the read that completed the event (its blank line, or the body end). */
  atNs: number;
}

/** What {@link SseDecoder.end} reports when the body is over. */
export interface SseEndResult {
  /** A trailing event that had data but no terminating blank line (accepted, as AIPerf does). */
  events: SseEvent[];
  /** True when the body ended inside an event: an unterminated line or undispatched fields. */
  midEvent: boolean;
}

const LF = 10;
const SPACE = 32;
const NO_EVENTS: SseEvent[] = [];

/** Stateful decoder for one response body. Not reusable across bodies. */
export class SseDecoder {
  private readonly utf8 = new TextDecoder('utf-8');
  /** Text of an unfinished line carried from earlier reads. */
  private tail = '';
  /** The previous read ended with `\r`: a `\n` starting the next text belongs to that line end. */
  private skipLeadingLf = false;
  private data = '';
  private hasData = false;
  private eventType = '';
  private out: SseEvent[] = NO_EVENTS;

  /**
   * Feeds one network read.
   * @param bytes raw body bytes as read from the socket
   * @param atNs monotonic ns at which the read arrived
   * @returns events completed by this read, in order (a shared empty array when none)
   */
  push(bytes: Uint8Array, atNs: number): SseEvent[] {
    const decoded = this.utf8.decode(bytes, { stream: true });
    if (decoded.length === 0) return NO_EVENTS;
    this.out = NO_EVENTS;
    this.scan(decoded, atNs);
    return this.out;
  }

  /**
   * Ends the body: flushes the UTF-8 decoder, interprets an unterminated last line and dispatches a
   * trailing event that has data but no blank line.
   * @param atNs monotonic ns at which the end of the body was seen
   */
  end(atNs: number): SseEndResult {
    this.out = NO_EVENTS;
    const rest = this.utf8.decode();
    if (rest.length > 0) this.scan(rest, atNs);
    const midEvent = this.tail.length > 0 || this.hasData || this.eventType.length > 0;
    if (this.tail.length > 0) {
      const line = this.tail;
      this.tail = '';
      this.processLine(line, atNs);
    }
    this.dispatch(atNs);
    return { events: this.out, midEvent };
  }

  private scan(decoded: string, atNs: number): void {
    const text = this.withTail(decoded);
    const length = text.length;
    let pos = 0;
    let lfAt = -2;
    let crAt = -2;
    while (pos < length) {
      if (lfAt !== -1 && lfAt < pos) lfAt = text.indexOf('\n', pos);
      if (crAt !== -1 && crAt < pos) crAt = text.indexOf('\r', pos);
      const endsWithCr = crAt !== -1 && (lfAt === -1 || crAt < lfAt);
      const lineEnd = endsWithCr ? crAt : lfAt;
      if (lineEnd === -1) {
        this.tail = text.slice(pos);
        return;
      }
      this.processLine(lineEnd === pos ? '' : text.slice(pos, lineEnd), atNs);
      pos = endsWithCr ? this.afterCr(text, crAt) : lfAt + 1;
    }
  }

  /** Decoded text prefixed with the carried tail, minus a `\n` that completes a previous `\r`. */
  private withTail(decoded: string): string {
    let text = decoded;
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (text.charCodeAt(0) === LF) text = text.slice(1);
    }
    if (this.tail.length > 0) {
      text = this.tail + text;
      this.tail = '';
    }
    return text;
  }

  /** Position after a `\r` line end (and its `\n`); remembers a `\r` that ends the text. */
  private afterCr(text: string, crAt: number): number {
    if (crAt + 1 === text.length) {
      this.skipLeadingLf = true;
      return crAt + 1;
    }
    return text.charCodeAt(crAt + 1) === LF ? crAt + 2 : crAt + 1;
  }

  private processLine(line: string, atNs: number): void {
    if (line.length === 0) {
      this.dispatch(atNs);
      return;
    }
    const colon = line.indexOf(':');
    if (colon === 0) return; // comment
    const field = colon === -1 ? line : line.slice(0, colon);
    let valueStart = colon === -1 ? line.length : colon + 1;
    if (line.charCodeAt(valueStart) === SPACE) valueStart += 1;
    if (field === 'data') {
      const value = line.slice(valueStart);
      this.data = this.hasData ? this.data + '\n' + value : value;
      this.hasData = true;
    } else if (field === 'event') {
      this.eventType = line.slice(valueStart);
    }
    // `id`, `retry` and unknown fields are ignored.
  }

  private dispatch(atNs: number): void {
    if (!this.hasData) {
      this.eventType = '';
      return;
    }
    const event: SseEvent = {
      event: this.eventType === '' ? 'message' : this.eventType,
      data: this.data,
      atNs,
    };
    if (this.out === NO_EVENTS) this.out = [event];
    else this.out.push(event);
    this.data = '';
    this.hasData = false;
    this.eventType = '';
  }
}
