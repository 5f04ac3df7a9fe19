/**
 * The record builder with the adapters' byte fast path (`parseBytes`, with its per-stream memo)
 * builds exactly the record it builds without it (the same adapter minus `parseBytes`: decode,
 * `JSON.parse`, `parse`), for random chat and completions streams in random reads: content,
 * reasoning, finish and usage chunks, `[DONE]` spellings, `event: error`, comments, invalid JSON,
 * multi-line data and CRLF.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { RecordBuilder } from '../../src/client/record-builder.js';
import type { SendRequest } from '../../src/client/types.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { EndpointAdapter } from '../../src/endpoint/types.js';
import { oneOffIdentity } from '../helpers/send-once.js';

function request(adapter: EndpointAdapter): SendRequest {
  return {
    identity: oneOffIdentity('m', 8),
    path: '/',
    headers: {},
    body: '{}',
    stream: true,
    adapter,
    timeoutMs: 1000,
  };
}

const token = fc.oneof(fc.constantFrom(' tok', 'é', '🙂', 'a"b', '\\n', ''), fc.string({ maxLength: 4 }));

function chunk(flavor: 'chat' | 'completions'): fc.Arbitrary<string> {
  const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm' };
  const choice = (t: string, field: string, finish: string | null) =>
    flavor === 'chat'
      ? { index: 0, delta: { [field]: t }, logprobs: null, finish_reason: finish }
      : { index: 0, text: t, finish_reason: finish };
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(token, fc.constantFrom('content', 'content', 'reasoning_content', 'reasoning'))
        .map(([t, field]) => JSON.stringify({ ...base, choices: [choice(t, field, null)] })),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(token, fc.nat({ max: 9 })).map(([t, n]) =>
        JSON.stringify({
          ...base,
          choices: [choice(t, 'content', 'stop')],
          usage: { prompt_tokens: 1, completion_tokens: n, total_tokens: n + 1 },
        }),
      ),
    },
    { weight: 1, arbitrary: fc.constant(JSON.stringify({ ...base, choices: [], usage: null })) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '[DONE]',
        ' [DONE] ',
        '{"error":{"message":"boom","code":503}}',
        '{"choices":[{"index":0,"delta":{"content":"x"}}',
        'not json',
      ),
    },
  );
}

function body(flavor: 'chat' | 'completions'): fc.Arbitrary<Buffer> {
  const event = fc.oneof(
    { weight: 10, arbitrary: chunk(flavor).map((d) => `data: ${d}\n\n`) },
    { weight: 1, arbitrary: chunk(flavor).map((d) => `data:${d}\r\n\r\n`) },
    { weight: 1, arbitrary: chunk(flavor).map((d) => `event: error\ndata: ${d}\n\n`) },
    { weight: 1, arbitrary: fc.constantFrom(': ping\n\n', 'data: {"choices":\ndata: []}\n\n', 'data:\n\n') },
  );
  return fc.array(event, { maxLength: 12 }).map((events) => Buffer.from(events.join(''), 'utf8'));
}

function build(adapter: EndpointAdapter, bytes: Buffer, cuts: number[]) {
  const builder = new RecordBuilder(request(adapter));
  builder.onHeaders(200, { 'content-type': 'text/event-stream' }, 'OK', 1);
  let from = 0;
  let t = 2;
  for (const cut of [...cuts, bytes.length]) {
    builder.onData(bytes.subarray(from, cut), t++);
    from = cut;
  }
  const raw = builder.end(t);
  return { ...raw, xRequestId: '' };
}

test('records are identical with and without the byte fast path', () => {
  const input = fc
    .constantFrom<'chat' | 'completions'>('chat', 'completions')
    .chain((flavor) => fc.tuple(fc.constant(flavor), body(flavor)))
    .chain(([flavor, bytes]) =>
      fc.tuple(
        fc.constant(flavor),
        fc.constant(bytes),
        fc
          .uniqueArray(fc.integer({ min: 0, max: bytes.length }), { maxLength: 10 })
          .map((c) => c.sort((a, b) => a - b)),
      ),
    );
  fc.assert(
    fc.property(input, ([flavor, bytes, cuts]) => {
      const fast = ENDPOINTS[flavor];
      assert.ok(fast.parseBytes !== undefined);
      const slow: EndpointAdapter = { ...fast, parseBytes: undefined };
      assert.deepStrictEqual(build(fast, bytes, cuts), build(slow, bytes, cuts));
    }),
    { numRuns: 1500 },
  );
});
