/**
 * Incremental decoder for `text/event-stream` bodies, following the WHATWG HTML standard,
 * "Server-sent events" § "Parsing an event stream" / "Interpreting an event stream".
 *
 * Design: lines are found on the raw bytes with `Buffer#indexOf` (CR and LF never occur inside a
 * UTF-8 multi-byte sequence, so a complete line always holds whole characters). Nothing is decoded
 * to text until needed: an event whose data is one line reaches the sink as a byte range of the read
 * that held it ({@link SseSink.onEventBytes}), so the caller can parse it in place; only an event
 * with several data lines, or one completed by a later read, is decoded to a string. Only the
 * unfinished last line of a read is copied and carried over to the next one. The result is the
 * same as decoding the whole body with `TextDecoder` first (leading BOM dropped, invalid bytes as
 * U+FFFD). Each dispatched event carries the arrival time of the read that held its terminating
 * blank line; the caller stamps that time once per read.
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

/** Receiver of dispatched events ({@link SseDecoder.feed}); exactly one method is called per event. */
export interface SseSink {
  /**
   * An event whose data is the UTF-8 bytes `bytes[start, end)` (one `data:` line, complete in the
   * current read). The bytes are valid only during the call.
   */
  onEventBytes(event: string, bytes: Buffer, start: number, end: number, atNs: number): void;
  /** An event whose data was decoded to text (several `data:` lines, or carried across reads). */
  onEventText(event: string, data: string, atNs: number): void;
}

/**
 * The largest event the decoder holds, bytes (16 MiB): the text of its unfinished line plus the data
 * lines it already has. An event of any size up to it is parsed (a whole reasoning trace or tool-call
 * argument in one event, FORMAT.md §6.1); past it the decoder stops ({@link SseDecoder.oversizedBytes})
 * and the request fails as `event_too_large`, the client's limit.
 */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;

/** Bytes of a stray line kept ({@link SseDecoder.strayLine}). */
const STRAY_LINE_BYTES = 160;

const LF = 10;
const CR = 13;
const SPACE = 32;
const COLON = 58;
const NO_EVENTS: SseEvent[] = [];

/** Collects events as {@link SseEvent} objects (the string API). */
class EventCollector implements SseSink {
  events: SseEvent[] = NO_EVENTS;

  onEventBytes(event: string, bytes: Buffer, start: number, end: number, atNs: number): void {
    this.onEventText(event, bytes.toString('utf8', start, end), atNs);
  }

  onEventText(event: string, data: string, atNs: number): void {
    const out: SseEvent = { event, data, atNs };
    if (this.events === NO_EVENTS) this.events = [out];
    else this.events.push(out);
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function isBomPrefix(bytes: Buffer): boolean {
  const bom = [0xef, 0xbb, 0xbf];
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== bom[i]) return false;
  return true;
}

/** True for the field name `name` (ASCII) at `bytes[start…]`, followed by `:` or the line end. */
function isField(bytes: Buffer, start: number, end: number, name: string): boolean {
  const n = name.length;
  if (end - start < n) return false;
  for (let i = 0; i < n; i++) if (bytes[start + i] !== name.charCodeAt(i)) return false;
  return start + n === end || bytes[start + n] === COLON;
}

/** {@link isField} for `data`, unrolled (it is checked on every line). */
function isDataField(bytes: Buffer, start: number, end: number): boolean {
  const length = end - start;
  return (
    length >= 4 &&
    bytes[start] === 0x64 &&
    bytes[start + 1] === 0x61 &&
    bytes[start + 2] === 0x74 &&
    bytes[start + 3] === 0x61 &&
    (length === 4 || bytes[start + 4] === COLON)
  );
}

/** Stateful decoder for one response body. Not reusable across bodies. */
export class SseDecoder {
  /** Bytes of an unfinished line carried from earlier reads (a copy): its first part… */
  private carry: Buffer | null = null;
  /** …the parts of later reads that did not end it either (joined once, when the line ends)… */
  private carryMore: Buffer[] | null = null;
  /** …and their length in all. */
  private carryLength = 0;
  /**
   * Set (to the bytes held) when the pending event grew past the size cap; the decoder then ignores
   * every later byte. 0 otherwise.
   */
  oversizedBytes = 0;
  /**
   * The start (about {@link STRAY_LINE_BYTES} bytes, lines joined with `\n`) of the lines that are
   * no SSE field (`data`, `event`, `id`, `retry`) nor a comment, e.g. a proxy's HTML error page
   * inside the stream; ignored as the standard says, but kept to explain a stream that then breaks
   * off. Null when none.
   */
  strayLine: string | null = null;

  /** @param maxEventBytes the size cap of one event ({@link MAX_EVENT_BYTES}). */
  constructor(private readonly maxEventBytes: number = MAX_EVENT_BYTES) {}
  /** The previous read ended with `\r`: a `\n` starting the next read belongs to that line end. */
  private skipLeadingLf = false;
  /** No byte seen yet that rules out a leading byte-order mark. */
  private bomCheck = true;
  private hasData = false;
  /** Data of the pending event as a byte range of the current read, when it is one line. */
  private dataBytes: Buffer | null = null;
  private dataStart = 0;
  private dataEnd = 0;
  /** Data of the pending event as text, otherwise. */
  private dataText = '';
  private eventType = '';
  private collector: EventCollector | null = null;

  /**
   * Feeds one network read.
   * @param bytes raw body bytes as read from the socket
   * @param atNs monotonic ns at which the read arrived
   * @returns events completed by this read, in order (a shared empty array when none)
   */
  push(bytes: Uint8Array, atNs: number): SseEvent[] {
    const collector = this.collect();
    this.feed(bytes, atNs, collector);
    return collector.events;
  }

  /**
   * Ends the body: interprets an unterminated last line and dispatches a trailing event that has
   * data but no blank line.
   * @param atNs monotonic ns at which the end of the body was seen
   */
  end(atNs: number): SseEndResult {
    const collector = this.collect();
    const midEvent = this.finish(atNs, collector);
    return { events: collector.events, midEvent };
  }

  /**
   * Feeds one network read; completed events go to `sink`, in order, before this returns.
   * @param bytes raw body bytes as read from the socket (not retained after the call)
   * @param atNs monotonic ns at which the read arrived
   */
  feed(bytes: Uint8Array, atNs: number, sink: SseSink): void {
    let buf = asBuffer(bytes);
    if (buf.length === 0 || this.oversizedBytes > 0) return;
    if (this.bomCheck) {
      const head = this.stripBom(buf);
      if (head === null) return;
      buf = head;
    }
    let pos = 0;
    if (this.skipLeadingLf) {
      this.skipLeadingLf = false;
      if (buf[0] === LF) pos = 1;
    }
    if (this.carry !== null) pos = this.completeCarry(buf, pos, atNs, sink);
    if (pos >= 0) this.scan(buf, pos, atNs, sink);
    if (this.dataBytes !== null && this.oversizedBytes === 0) this.materialize();
  }

  /**
   * Ends the body (see {@link SseDecoder.end}); a trailing event goes to `sink`.
   * @returns true when the body ended inside an event
   */
  finish(atNs: number, sink: SseSink): boolean {
    if (this.oversizedBytes > 0) return true;
    const midEvent = this.carry !== null || this.hasData || this.eventType.length > 0;
    if (this.carry !== null) {
      const line = this.takeCarry(null);
      this.processLine(line, 0, line.length, atNs, sink);
    }
    this.dispatch(atNs, sink);
    return midEvent;
  }

  private collect(): EventCollector {
    this.collector ??= new EventCollector();
    this.collector.events = NO_EVENTS;
    return this.collector;
  }

  /** Drops a leading BOM (possibly split across reads); null while the first bytes could still be one. */
  private stripBom(buf: Buffer): Buffer | null {
    const all = this.carry === null ? buf : Buffer.concat([this.carry, buf]);
    this.carry = null;
    if (all.length < 3 && isBomPrefix(all)) {
      this.carry = Buffer.from(all);
      return null;
    }
    this.bomCheck = false;
    return isBomPrefix(all.subarray(0, 3)) ? all.subarray(3) : all;
  }

  /** Completes the carried line with the start of `buf`; returns where scanning continues, -1 for none. */
  private completeCarry(buf: Buffer, pos: number, atNs: number, sink: SseSink): number {
    const lf = buf.indexOf(LF, pos);
    const cr = buf.indexOf(CR, pos);
    const lineEnd = cr !== -1 && (lf === -1 || cr < lf) ? cr : lf;
    if (lineEnd === -1) {
      this.carryMore ??= [];
      this.carryMore.push(Buffer.from(buf.subarray(pos)));
      this.carryLength += buf.length - pos;
      this.checkSize();
      return -1;
    }
    const line = this.takeCarry(buf.subarray(pos, lineEnd));
    this.processLine(line, 0, line.length, atNs, sink);
    return buf[lineEnd] === CR ? this.afterCr(buf, lineEnd) : lineEnd + 1;
  }

  /** The carried line joined with `tail` (one copy), and no carry left. */
  private takeCarry(tail: Buffer | null): Buffer {
    const carry = this.carry as Buffer;
    const more = this.carryMore;
    this.carry = null;
    this.carryMore = null;
    this.carryLength = 0;
    if (more === null) return tail === null ? carry : Buffer.concat([carry, tail]);
    more.unshift(carry);
    if (tail !== null) more.push(tail);
    return Buffer.concat(more);
  }

  /** Stops the decoder when the pending event (carried line plus data so far) is over the cap. */
  private checkSize(): void {
    const held = this.carryLength + this.dataText.length;
    if (held <= this.maxEventBytes) return;
    this.oversizedBytes = held;
    this.carry = null;
    this.carryMore = null;
    this.carryLength = 0;
    this.dataText = '';
    this.dataBytes = null;
    this.hasData = false;
  }

  private scan(buf: Buffer, from: number, atNs: number, sink: SseSink): void {
    const length = buf.length;
    let pos = from;
    let lfAt = -2;
    let crAt = -2;
    while (pos < length && this.oversizedBytes === 0) {
      if (lfAt !== -1 && lfAt < pos) lfAt = buf.indexOf(LF, pos);
      if (crAt !== -1 && crAt < pos) crAt = buf.indexOf(CR, pos);
      const endsWithCr = crAt !== -1 && (lfAt === -1 || crAt < lfAt);
      const lineEnd = endsWithCr ? crAt : lfAt;
      if (lineEnd === -1) {
        this.carry = Buffer.from(buf.subarray(pos));
        this.carryLength = length - pos;
        this.checkSize();
        return;
      }
      this.processLine(buf, pos, lineEnd, atNs, sink);
      pos = endsWithCr ? this.afterCr(buf, crAt) : lfAt + 1;
    }
  }

  /** Position after a `\r` line end (and its `\n`); remembers a `\r` that ends the read. */
  private afterCr(buf: Buffer, crAt: number): number {
    if (crAt + 1 === buf.length) {
      this.skipLeadingLf = true;
      return crAt + 1;
    }
    return buf[crAt + 1] === LF ? crAt + 2 : crAt + 1;
  }

  private processLine(buf: Buffer, start: number, end: number, atNs: number, sink: SseSink): void {
    if (start === end) {
      this.dispatch(atNs, sink);
      return;
    }
    if (buf[start] === COLON) return; // comment
    if (isDataField(buf, start, end)) {
      let valueStart = Math.min(start + 5, end);
      if (valueStart < end && buf[valueStart] === SPACE) valueStart += 1;
      if (!this.hasData) {
        this.hasData = true;
        this.dataBytes = buf;
        this.dataStart = valueStart;
        this.dataEnd = end;
      } else {
        if (this.dataBytes !== null) this.materialize();
        this.dataText = this.dataText + '\n' + buf.toString('utf8', valueStart, end);
        this.checkSize();
      }
    } else if (isField(buf, start, end, 'event')) {
      let valueStart = Math.min(start + 6, end);
      if (valueStart < end && buf[valueStart] === SPACE) valueStart += 1;
      this.eventType = buf.toString('utf8', valueStart, end);
    } else if (!isField(buf, start, end, 'id') && !isField(buf, start, end, 'retry')) {
      this.keepStray(buf, start, end);
    }
    // `id`, `retry` and unknown fields are ignored.
  }

  /** Adds a stray line to {@link SseDecoder.strayLine} while it is under {@link STRAY_LINE_BYTES}. */
  private keepStray(buf: Buffer, start: number, end: number): void {
    const kept = this.strayLine;
    if (kept !== null && kept.length >= STRAY_LINE_BYTES) return;
    const room = STRAY_LINE_BYTES - (kept?.length ?? 0);
    const line = buf.toString('utf8', start, Math.min(end, start + room));
    this.strayLine = kept === null ? line : `${kept}\n${line}`;
  }

  /** Turns pending single-line data into text (it outlives the read that held it). */
  private materialize(): void {
    this.dataText = (this.dataBytes as Buffer).toString('utf8', this.dataStart, this.dataEnd);
    this.dataBytes = null;
  }

  private dispatch(atNs: number, sink: SseSink): void {
    if (!this.hasData) {
      this.eventType = '';
      return;
    }
    const event = this.eventType === '' ? 'message' : this.eventType;
    const bytes = this.dataBytes;
    this.hasData = false;
    this.dataBytes = null;
    this.eventType = '';
    if (bytes !== null) sink.onEventBytes(event, bytes, this.dataStart, this.dataEnd, atNs);
    else {
      const data = this.dataText;
      this.dataText = '';
      sink.onEventText(event, data, atNs);
    }
  }
}
