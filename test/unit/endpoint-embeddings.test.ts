import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordBuilder } from '../../src/client/record-builder.js';
import { embeddings } from '../../src/endpoint/embeddings.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { endpointPathFor } from '../../src/endpoint/types.js';
import { processRecord } from '../../src/record/process.js';

const BODY = {
  object: 'list',
  data: [
    { object: 'embedding', index: 0, embedding: [0.25, -0.5] },
    { object: 'embedding', index: 1, embedding: [0.75, 0] },
  ],
  model: 'm',
  usage: { prompt_tokens: 7, total_tokens: 7 },
};

test('embeddings body: model and input texts, no stream or output length, extras merged', () => {
  const body = embeddings.buildBody({
    model: 'm',
    messages: [
      { role: 'user', content: 'first' },
      { role: 'user', content: null },
      { role: 'user', content: 'second' },
    ],
    stream: true,
    maxTokens: 5,
    useLegacyMaxTokens: false,
    perChunkUsage: true,
    extraInputs: { encoding_format: 'float' },
    turnExtra: { dimensions: 2 },
  });
  assert.deepEqual(body, { model: 'm', input: ['first', 'second'], encoding_format: 'float', dimensions: 2 });
});

test('embeddings parse: a list with vectors is non-token content with usage; errors are in-band', () => {
  const parsed = embeddings.parse(BODY, false);
  assert.deepEqual(
    [parsed.text, parsed.reasoning, parsed.nonTokenContent, parsed.usage?.prompt_tokens],
    ['', '', true, 7],
  );
  assert.equal(embeddings.parse({ object: 'list', data: [] }, false).nonTokenContent, undefined);
  assert.equal(embeddings.parse({ data: [{ embedding: 'AAAA' }] }, false).nonTokenContent, true);
  assert.equal(embeddings.parse({ error: { message: 'too long', code: 400 } }, false).error?.code, 400);
  assert.equal(embeddings.parse('nope', false).nonTokenContent, undefined);
});

test('an embeddings response makes a valid record with OSL 0 and no stream metrics', () => {
  const builder = new RecordBuilder({
    identity: {
      conversationId: 'c',
      turnIndex: 0,
      sessionNum: 0,
      xRequestId: 'r',
      xCorrelationId: 'c',
      model: 'm',
      scheduledNs: null,
      inputTokens: 7,
      requestedOutputTokens: null,
    },
    path: '/v1/embeddings',
    headers: {},
    body: '{}',
    stream: false,
    adapter: embeddings,
    timeoutMs: 1000,
  });
  builder.raw.startNs = 1_000_000;
  builder.onHeaders(200, { 'content-type': 'application/json' }, 'OK', 2_000_000);
  builder.onData(Buffer.from(JSON.stringify(BODY)), 3_000_000);
  const raw = builder.end(4_000_000);
  assert.equal(raw.error, null);
  assert.equal(raw.chunks.length, 1);
  for (const tokenizer of [null, { count: (t: string) => t.length }]) {
    const processed = processRecord(raw, {
      tokenizer: tokenizer as never,
      useServerTokenCount: false,
      streaming: false,
      perChunkUsage: false,
    });
    assert.equal(processed.valid, true);
    assert.equal(processed.metrics.output_sequence_length, 0);
    assert.equal(processed.metrics.input_sequence_length, 7);
    assert.equal(processed.metrics.request_latency, 3);
    assert.equal(processed.metrics.time_to_first_token, undefined);
  }
});

test('registry: embeddings is not streamable and keeps its path when streaming is asked', () => {
  assert.equal(ENDPOINTS.embeddings, embeddings);
  assert.equal(embeddings.streamable, false);
  assert.equal(endpointPathFor(embeddings, true), '/v1/embeddings');
  assert.equal(endpointPathFor(embeddings, true, '/custom'), '/custom');
});

test('chat_embeddings: {model, messages} to /v1/embeddings (no input, stream or length), answers read as embeddings', () => {
  const adapter = ENDPOINTS.chat_embeddings;
  const messages = [
    { role: 'system' as const, content: 'be brief' },
    { role: 'user' as const, content: 'embed me' },
  ];
  const body = adapter.buildBody({
    model: 'vlm2vec',
    messages,
    stream: false,
    maxTokens: 5,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: { encoding_format: 'float' },
  });
  assert.deepEqual(body, { model: 'vlm2vec', messages, encoding_format: 'float' });
  assert.equal(endpointPathFor(adapter, false), '/v1/embeddings');
  assert.equal(adapter.streamable, false);
  assert.equal(adapter.generatesTokens, false);
  assert.equal(adapter.parse(BODY, false).nonTokenContent, true);
  assert.equal(adapter.parse({ object: 'list', data: [] }, false).nonTokenContent, undefined);
});

test('nim_embeddings: the OpenAI embeddings body and answer under AIPerf name', () => {
  const adapter = ENDPOINTS.nim_embeddings;
  const body = adapter.buildBody({
    model: 'nv-embedqa',
    messages: [{ role: 'user', content: 'q' }],
    stream: false,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: { input_type: 'query' },
  });
  assert.deepEqual(body, { model: 'nv-embedqa', input: ['q'], input_type: 'query' });
  assert.equal(endpointPathFor(adapter, false), '/v1/embeddings');
  assert.equal(adapter.parse(BODY, false).usage?.prompt_tokens, 7);
});
