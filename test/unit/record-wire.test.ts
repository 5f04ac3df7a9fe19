/**
 * The worker → main record transport: random records packed, structured-cloned (as postMessage
 * does) and unpacked equal the originals, chunk texts with surrogate pairs, empty strings,
 * reasoning and running usage counts included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { packRecords, unpackRecords } from '../../src/client/record-wire.js';
import type { RawRecord } from '../../src/record/types.js';

const chunk = fc
  .record({
    atNs: fc.double({ noNaN: true, min: 0, max: 1e16 }),
    text: fc.string({ unit: 'binary', maxLength: 6 }),
    reasoning: fc.oneof(fc.constant(''), fc.string({ unit: 'grapheme', maxLength: 4 })),
    usage: fc.option(fc.oneof(fc.nat(), fc.double({ noNaN: true }))),
  })
  .map(({ usage, ...c }) => (usage === null ? c : { ...c, usageCompletionTokens: usage }));

const record: fc.Arbitrary<RawRecord> = fc
  .record({
    chunks: fc.array(chunk, { maxLength: 30 }),
    startNs: fc.double({ noNaN: true, min: 0, max: 1e16 }),
    requestType: fc.option(fc.constantFrom('text', 'image')),
    error: fc.option(
      fc.record({
        kind: fc.constant('timeout' as const),
        code: fc.constant(408),
        type: fc.string(),
        message: fc.string(),
        failedAtNs: fc.nat(),
      }),
    ),
    usage: fc.option(fc.record({ completion_tokens: fc.nat() })),
  })
  .map(({ chunks, startNs, requestType, error, usage }) => {
    const raw: RawRecord = {
      conversationId: 'c',
      turnIndex: 0,
      sessionNum: 1,
      xRequestId: 'x',
      xCorrelationId: 'y',
      model: 'm',
      scheduledNs: null,
      startNs,
      ackNs: startNs + 1,
      chunks,
      streamEndNs: null,
      endNs: startNs + 2,
      usage,
      finishReason: 'stop',
      inputTokens: 3,
      requestedOutputTokens: null,
      httpStatus: 200,
      parseErrors: 0,
      error,
      cancelled: false,
    };
    if (requestType !== null) raw.requestType = requestType;
    return raw;
  });

test('pack → structured clone → unpack gives back the same records', () => {
  fc.assert(
    fc.property(fc.array(record, { maxLength: 6 }), (records) => {
      const expected = structuredClone(records);
      const received = structuredClone(packRecords(records));
      assert.deepStrictEqual(unpackRecords(received), expected);
    }),
    { numRuns: 300 },
  );
});
