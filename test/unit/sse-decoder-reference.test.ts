/**
 * Differential property: the byte-level SSE decoder yields exactly the events (type, data, stamp)
 * and end state of the straightforward text decoder it replaced (whole-body `TextDecoder`, then
 * line scanning on the string), kept below as the reference, for random bytes in random reads:
 * BOMs split across reads, CR/LF/CRLF split across reads, multi-byte and invalid UTF-8.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SseDecoder, type SseEndResult, type SseEvent, type SseSink } from '../../src/client/sse-decoder.js';

const LF = 10;
const SPACE = 32;
const NO_EVENTS: SseEvent[] = [];

/** The text decoder the byte decoder replaced (reference). */
class ReferenceDecoder {
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

type Decoded = { events: [string, string, number][]; midEvent: boolean };

function viaPush(decoder: SseDecoder | ReferenceDecoder, body: Uint8Array, cuts: number[]): Decoded {
  const events: [string, string, number][] = [];
  let from = 0;
  let read = 0;
  for (const cut of [...cuts, body.length]) {
    read += 1;
    for (const e of decoder.push(body.subarray(from, cut), read)) events.push([e.event, e.data, e.atNs]);
    from = cut;
  }
  const end: SseEndResult = decoder.end(read + 1);
  for (const e of end.events) events.push([e.event, e.data, e.atNs]);
  return { events, midEvent: end.midEvent };
}

/** The sink API, decoding byte ranges itself (as the record builder does). */
function viaSink(body: Uint8Array, cuts: number[]): Decoded {
  const events: [string, string, number][] = [];
  const sink: SseSink = {
    onEventBytes: (event, bytes, start, end, atNs) =>
      events.push([event, Buffer.from(bytes.subarray(start, end)).toString('utf8'), atNs]),
    onEventText: (event, data, atNs) => events.push([event, data, atNs]),
  };
  const decoder = new SseDecoder();
  let from = 0;
  let read = 0;
  for (const cut of [...cuts, body.length]) {
    read += 1;
    decoder.feed(Buffer.from(body.subarray(from, cut)), read, sink);
    from = cut;
  }
  const midEvent = decoder.finish(read + 1, sink);
  return { events, midEvent };
}

function bodies(): fc.Arbitrary<Uint8Array> {
  const piece = fc.oneof(
    fc.constantFrom('data:', 'data: ', 'data', 'event:', 'event: error', 'event', 'id: 1', ':', '[DONE]'),
    fc.constantFrom('{"a":1}', 'dataX: y', ' data: z', 'ev'),
    fc.constantFrom('\n', '\r', '\r\n', '\n\n', '\r\r', '\r\n\r\n', ' ', 'é', '🙂', '\uFEFF', '中'),
    fc.string({ maxLength: 8 }),
  );
  const text = fc.array(piece, { maxLength: 30 }).map((p) => Buffer.from(p.join(''), 'utf8'));
  const raw = fc.uint8Array({ maxLength: 60 });
  const bytePieces = fc.constantFrom(
    Buffer.from([0xef, 0xbb, 0xbf]),
    Buffer.from([0xef, 0xbb]),
    Buffer.from([0xef]),
    Buffer.from([0xe2, 0x82]),
    Buffer.from([0xf0, 0x9f, 0x99]),
    Buffer.from([0xff]),
    Buffer.from([0x80]),
  );
  const mixed = fc
    .array(fc.oneof(text, bytePieces, raw), { maxLength: 6 })
    .map((parts) => Buffer.concat(parts));
  return fc.oneof(
    text,
    mixed,
    fc.tuple(bytePieces, text).map(([a, b]) => Buffer.concat([a, b])),
  );
}

function cutsFor(length: number): fc.Arbitrary<number[]> {
  return fc
    .uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 40 })
    .map((c) => c.sort((a, b) => a - b));
}

test('byte decoder = text decoder for random bytes in random reads (push/end and feed/finish)', () => {
  const input = bodies().chain((body) => fc.tuple(fc.constant(body), cutsFor(body.length)));
  fc.assert(
    fc.property(input, ([body, cuts]) => {
      const expected = viaPush(new ReferenceDecoder(), body, cuts);
      assert.deepEqual(viaPush(new SseDecoder(), body, cuts), expected);
      assert.deepEqual(viaSink(body, cuts), expected);
    }),
    { numRuns: 3000 },
  );
});

test('byte decoder = text decoder, one byte per read', () => {
  const samples = [
    '\uFEFFdata: a\r\n\r\ndata: b\rdata: c\r\r',
    'data: café 🙂\n\nevent: error\ndata: {"x":1}\n\ndata: end',
    'data: one\ndata: two\n\n: c\ndata\n\nevent\n\n',
  ];
  for (const sample of samples) {
    const body = Buffer.from(sample, 'utf8');
    const cuts = Array.from({ length: body.length }, (_, i) => i);
    assert.deepEqual(viaPush(new SseDecoder(), body, cuts), viaPush(new ReferenceDecoder(), body, cuts));
    assert.deepEqual(viaSink(body, cuts), viaPush(new ReferenceDecoder(), body, cuts));
  }
});
