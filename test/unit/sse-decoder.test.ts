import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SseDecoder, type SseEvent } from '../../src/client/sse-decoder.js';

const utf8 = (text: string) => new TextEncoder().encode(text);

/** Feeds `reads` (strings or raw bytes) at times 1, 2, 3, …; returns events plus the end result. */
function decode(reads: (string | Uint8Array)[]): { events: SseEvent[]; midEvent: boolean } {
  const decoder = new SseDecoder();
  const events: SseEvent[] = [];
  reads.forEach((read, i) => {
    events.push(...decoder.push(typeof read === 'string' ? utf8(read) : read, i + 1));
  });
  const end = decoder.end(reads.length + 1);
  events.push(...end.events);
  return { events, midEvent: end.midEvent };
}

const simple = (events: SseEvent[]) => events.map((e) => [e.event, e.data, e.atNs]);

test('data with and without one leading space; only one space is removed', () => {
  const { events } = decode(['data:a\n\ndata: b\n\ndata:  c\n\n']);
  assert.deepEqual(simple(events), [
    ['message', 'a', 1],
    ['message', 'b', 1],
    ['message', ' c', 1],
  ]);
});

test('multi-line data is joined with \\n; comments, id and retry are ignored', () => {
  const { events } = decode([': keep-alive\nid: 7\nretry: 100\ndata: one\ndata:two\nfoo: bar\n\n']);
  assert.deepEqual(simple(events), [['message', 'one\ntwo', 1]]);
});

test('event type is kept for one event and reset after dispatch', () => {
  const { events } = decode(['event: error\ndata: {"x":1}\n\ndata: next\n\n']);
  assert.deepEqual(simple(events), [
    ['error', '{"x":1}', 1],
    ['message', 'next', 1],
  ]);
});

test('a blank line without data dispatches nothing; `data:` alone dispatches an empty string', () => {
  assert.deepEqual(simple(decode(['event: ping\n\n\n\n']).events), []);
  assert.deepEqual(simple(decode(['data:\n\n']).events), [['message', '', 1]]);
  assert.deepEqual(simple(decode(['data\n\n']).events), [['message', '', 1]]);
});

test('CRLF, CR and LF line ends all work, also mixed', () => {
  const { events } = decode(['data: a\r\n\r\ndata: b\r\rdata: c\n\ndata: d\r\n\n']);
  assert.deepEqual(
    events.map((e) => e.data),
    ['a', 'b', 'c', 'd'],
  );
});

test('a \\r\\n split across reads is one line end, not an extra blank line', () => {
  const { events } = decode(['data: a\r', '\ndata: b\r', '\n\r', '\n']);
  assert.deepEqual(simple(events), [['message', 'a\nb', 3]]);
});

test('an event is stamped with the read that carried its blank line', () => {
  const { events } = decode(['da', 'ta: x', '\n', '\n', 'data: y\n\ndata: z\n\n']);
  assert.deepEqual(simple(events), [
    ['message', 'x', 4],
    ['message', 'y', 5],
    ['message', 'z', 5],
  ]);
});

test('UTF-8 characters split across reads survive', () => {
  const bytes = utf8('data: café 🙂\n\n');
  const reads = [...bytes].map((byte) => Uint8Array.of(byte));
  assert.deepEqual(
    decode(reads).events.map((e) => e.data),
    ['café 🙂'],
  );
});

test('end() flushes a trailing event without a blank line and reports mid-event', () => {
  const done = decode(['data: a\n\n']);
  assert.equal(done.midEvent, false);
  const trailing = decode(['data: a\n\ndata: [DONE]']);
  assert.deepEqual(simple(trailing.events), [
    ['message', 'a', 1],
    ['message', '[DONE]', 2],
  ]);
  assert.equal(trailing.midEvent, true);
  const halfLine = decode(['data: a\n\ndat']);
  assert.equal(halfLine.midEvent, true);
  assert.equal(halfLine.events.length, 1);
});

test('a leading BOM is dropped and invalid bytes become U+FFFD', () => {
  const withBom = Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8('data: x\n\n'));
  assert.deepEqual(
    decode([withBom]).events.map((e) => e.data),
    ['x'],
  );
  const invalid = Uint8Array.of(...utf8('data: '), 0xff, ...utf8('\n\n'));
  assert.deepEqual(
    decode([invalid]).events.map((e) => e.data),
    ['\uFFFD'],
  );
});

test('push returns no events for a read that completes none', () => {
  const decoder = new SseDecoder();
  assert.equal(decoder.push(utf8('data: partial'), 1).length, 0);
  assert.equal(decoder.push(new Uint8Array(0), 2).length, 0);
  assert.deepEqual(simple(decoder.push(utf8('\n\n'), 3)), [['message', 'partial', 3]]);
});

test('the event size cap: an event up to it spans any number of reads, past it the decoder stops', () => {
  const cap = 64;
  const fits = new SseDecoder(cap);
  const line = `data: ${'x'.repeat(cap - 8)}`;
  const got: SseEvent[] = [];
  for (let i = 0; i < line.length; i += 7) got.push(...fits.push(utf8(line.slice(i, i + 7)), i));
  got.push(...fits.push(utf8('\n\n'), 99));
  assert.deepEqual(simple(got), [['message', 'x'.repeat(cap - 8), 99]]);
  assert.equal(fits.oversizedBytes, 0);

  // One line carried over reads past the cap.
  const long = new SseDecoder(cap);
  long.push(utf8(`data: ${'y'.repeat(40)}`), 1);
  assert.equal(long.oversizedBytes, 0);
  long.push(utf8('y'.repeat(40)), 2);
  assert.ok(long.oversizedBytes > cap, `${long.oversizedBytes} bytes held`);
  // Nothing after it is decoded, and the body ends mid-event.
  assert.deepEqual(long.push(utf8('\n\ndata: z\n\n'), 3), []);
  assert.deepEqual(long.end(4), { events: [], midEvent: true });

  // Several data lines of one event, each small, past the cap together.
  const lines = new SseDecoder(cap);
  assert.deepEqual(lines.push(utf8(`data: ${'a'.repeat(30)}\ndata: ${'b'.repeat(30)}\n`), 1), []);
  assert.equal(lines.oversizedBytes, 0);
  lines.push(utf8(`data: ${'c'.repeat(30)}\n`), 2);
  assert.ok(lines.oversizedBytes > cap);
});

test('lines that are no SSE field are ignored but kept (bounded) to explain a stream that breaks off', () => {
  const decoder = new SseDecoder();
  const page = '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n';
  const events = decoder.push(utf8(`data: a\n\nid: 7\nretry: 5\n: ping\n${page}`), 1);
  assert.deepEqual(simple(events), [['message', 'a', 1]]);
  assert.equal(decoder.strayLine, '<html>\n<head><title>502 Bad Gateway</title></head>');
  decoder.push(utf8(`${'z'.repeat(400)}\n`), 2);
  assert.ok((decoder.strayLine?.length ?? 0) <= 161, 'kept bounded');
});
