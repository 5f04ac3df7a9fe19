/**
 * Property: however the bytes of a real fixture stream are split into reads (mid UTF-8 character,
 * between \r and \n, one byte at a time), the decoder yields the same events in the same order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { SseDecoder } from '../../src/client/sse-decoder.js';
import { loadFixtures } from '../helpers/fixture-player.js';

function bodyOf(writes: { data?: string; hex?: string }[]): Uint8Array {
  const parts = writes.map((w) =>
    w.hex !== undefined ? Buffer.from(w.hex, 'hex') : Buffer.from(w.data ?? '', 'utf8'),
  );
  return new Uint8Array(Buffer.concat(parts));
}

/** Real fixture bodies, plus CRLF and CR variants and one with multi-byte characters. */
function corpus(): Uint8Array[] {
  const bodies: Uint8Array[] = [];
  for (const fixture of loadFixtures()) {
    const writes = fixture.response.writes;
    if (writes === undefined || writes.length === 0) continue;
    const body = bodyOf(writes);
    const text = Buffer.from(body).toString('utf8');
    bodies.push(body, Buffer.from(text.replaceAll('\n', '\r\n')), Buffer.from(text.replaceAll('\n', '\r')));
  }
  bodies.push(Buffer.from('data: café 🙂 — 中文\r\n: note\r\nevent: x\r\ndata: ü\r\n\r\ndata: end', 'utf8'));
  return bodies;
}

function decodeWith(body: Uint8Array, cuts: number[]): { event: string; data: string }[] {
  const decoder = new SseDecoder();
  const out: { event: string; data: string }[] = [];
  let from = 0;
  for (const cut of [...cuts, body.length]) {
    for (const e of decoder.push(body.subarray(from, cut), 0)) out.push({ event: e.event, data: e.data });
    from = cut;
  }
  for (const e of decoder.end(0).events) out.push({ event: e.event, data: e.data });
  return out;
}

test('random read splits of fixture streams decode to identical events', () => {
  const bodies = corpus();
  const expected = bodies.map((body) => decodeWith(body, []));
  const splits = fc.nat({ max: bodies.length - 1 }).chain((index) => {
    const length = bodies[index]?.length ?? 0;
    const cuts = fc
      .uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 60 })
      .map((c) => c.sort((a, b) => a - b));
    return fc.tuple(fc.constant(index), cuts);
  });
  fc.assert(
    fc.property(splits, ([index, cuts]) => {
      const body = bodies[index] as Uint8Array;
      assert.deepEqual(decodeWith(body, cuts), expected[index]);
    }),
    { numRuns: 400 },
  );
});

test('one-byte reads of every fixture stream decode to identical events', () => {
  for (const body of corpus()) {
    const everyByte = Array.from({ length: body.length }, (_, i) => i);
    assert.deepEqual(decodeWith(body, everyByte), decodeWith(body, []));
  }
});

test('a CRLF body decodes to the same events as its LF original', () => {
  for (const fixture of loadFixtures()) {
    const writes = fixture.response.writes;
    if (writes === undefined || writes.length === 0) continue;
    const body = bodyOf(writes);
    const crlf = Buffer.from(Buffer.from(body).toString('utf8').replaceAll('\n', '\r\n'));
    assert.deepEqual(decodeWith(crlf, []), decodeWith(body, []));
  }
});
