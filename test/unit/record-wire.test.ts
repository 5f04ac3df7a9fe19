/**
 * The worker → main record transport: random records packed, structured-cloned (as postMessage
 * does) and unpacked equal the originals, chunk texts with surrogate pairs, empty strings,
 * reasoning, running usage counts, the server's own timing, the cumulative-text mark and a reply's
 * tool calls included.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { packRecords, unpackRecords } from '../../src/client/record-wire.js';
import { emptyRecord } from '../../src/record/raw-record.js';
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
    ackNs: fc.option(fc.double({ noNaN: true, min: 0, max: 1e16 })),
    streamEndNs: fc.option(fc.double({ noNaN: true, min: 0, max: 1e16 })),
    httpStatus: fc.option(fc.constantFrom(200, 429, 503)),
    finishReason: fc.option(fc.constantFrom('stop', 'length')),
    scheduledNs: fc.option(fc.nat()),
    parseErrors: fc.nat({ max: 3 }),
    cancelled: fc.boolean(),
    sentNs: fc.option(fc.double({ noNaN: true, min: 0, max: 1e16 })),
    connectionReused: fc.option(fc.boolean()),
    connectDurationNs: fc.option(fc.nat()),
    responseStreamed: fc.option(fc.boolean()),
    serverTiming: fc.option(
      fc.record(
        {
          source: fc.constantFrom('vllm_metrics' as const, 'llamacpp_timings' as const),
          ttftMs: fc.double({ noNaN: true, min: 0, max: 1e6 }),
          queueMs: fc.nat(),
          cachedTokens: fc.nat(),
        },
        { requiredKeys: ['source'] },
      ),
    ),
    idleClose: fc.option(
      fc.record({
        idleNs: fc.double({ noNaN: true, min: 0, max: 1e12 }),
        byServer: fc.boolean(),
        keepAliveS: fc.option(fc.nat({ max: 600 })),
      }),
    ),
    cumulativeText: fc.boolean(),
    toolReply: fc.option(
      fc.record({
        content: fc.string({ maxLength: 4 }),
        toolCalls: fc.array(
          fc.record(
            {
              id: fc.string({ maxLength: 6 }),
              type: fc.constant('function'),
              function: fc.record({
                name: fc.string({ maxLength: 4 }),
                arguments: fc.string({ maxLength: 8 }),
              }),
            },
            { requiredKeys: ['type', 'function'] },
          ),
          { maxLength: 3 },
        ),
      }),
    ),
  })
  .map(
    ({
      chunks,
      startNs,
      requestType,
      error,
      usage,
      idleClose,
      serverTiming,
      cumulativeText,
      toolReply,
      ...observed
    }) => {
      const raw: RawRecord = {
        conversationId: 'c',
        turnIndex: 0,
        sessionNum: 1,
        xRequestId: 'x',
        xCorrelationId: 'y',
        model: 'm',
        scheduledNs: observed.scheduledNs,
        startNs,
        sentNs: observed.sentNs,
        connectionReused: observed.connectionReused,
        connectDurationNs: observed.connectDurationNs,
        ackNs: observed.ackNs,
        responseStreamed: observed.responseStreamed,
        chunks,
        streamEndNs: observed.streamEndNs,
        endNs: startNs + 2,
        usage,
        finishReason: observed.finishReason,
        inputTokens: 3,
        requestedOutputTokens: null,
        httpStatus: observed.httpStatus,
        parseErrors: observed.parseErrors,
        error,
        cancelled: observed.cancelled,
      };
      if (requestType !== null) raw.requestType = requestType;
      if (idleClose !== null) raw.idleClose = idleClose;
      if (serverTiming !== null) raw.serverTiming = serverTiming;
      if (cumulativeText) raw.cumulativeText = true;
      if (toolReply !== null) raw.toolReply = toolReply;
      return raw;
    },
  );

/** The record of the same request before anything was observed (as the main thread builds it). */
function shellOf(raw: RawRecord): RawRecord {
  return emptyRecord({
    conversationId: raw.conversationId,
    turnIndex: raw.turnIndex,
    sessionNum: raw.sessionNum,
    xRequestId: raw.xRequestId,
    xCorrelationId: raw.xCorrelationId,
    model: raw.model,
    scheduledNs: raw.scheduledNs,
    inputTokens: raw.inputTokens,
    requestedOutputTokens: raw.requestedOutputTokens,
    ...(raw.requestType === undefined ? {} : { requestType: raw.requestType }),
  });
}

test('pack → structured clone → unpack onto identity shells gives back the same records', () => {
  fc.assert(
    fc.property(fc.array(record, { maxLength: 6 }), (records) => {
      const expected = structuredClone(records);
      const received = structuredClone(packRecords(records));
      assert.deepStrictEqual(unpackRecords(received, records.map(shellOf)), expected);
    }),
    { numRuns: 300 },
  );
});
