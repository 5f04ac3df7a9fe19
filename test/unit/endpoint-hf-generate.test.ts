import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordBuilder } from '../../src/client/record-builder.js';
import { huggingfaceGenerate as tgi } from '../../src/endpoint/hf-generate.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { endpointPathFor } from '../../src/endpoint/types.js';
import type { RawRecord } from '../../src/record/types.js';

function tokenEvent(text: string, special = false, final?: { generated_text: string; details: unknown }) {
  return {
    index: 1,
    token: { id: 5, text, logprob: -0.1, special },
    generated_text: final?.generated_text ?? null,
    details: final?.details ?? null,
  };
}

const FINAL = tokenEvent('</s>', true, {
  generated_text: 'Hello world',
  details: { finish_reason: 'eos_token', generated_tokens: 3, seed: null },
});

function streamRecord(datas: unknown[]): RawRecord {
  const builder = new RecordBuilder({
    identity: {
      conversationId: 'c',
      turnIndex: 0,
      sessionNum: 0,
      xRequestId: 'r',
      xCorrelationId: 'c',
      model: 'm',
      scheduledNs: null,
      inputTokens: null,
      requestedOutputTokens: null,
    },
    path: '/generate_stream',
    headers: {},
    body: '{}',
    stream: true,
    adapter: tgi,
    timeoutMs: 1000,
  });
  builder.onHeaders(200, { 'content-type': 'text/event-stream' }, 'OK', 1);
  datas.forEach((d, i) => {
    builder.onData(Buffer.from(`data:${JSON.stringify(d)}\n\n`), i + 2);
  });
  return builder.end(datas.length + 2);
}

test('TGI body: inputs and parameters with max_new_tokens and details, extras merged', () => {
  const input = {
    model: 'm',
    messages: [{ role: 'user', content: 'Why is the sky blue?' }],
    stream: true,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: { stream: false },
  };
  assert.deepEqual(tgi.buildBody({ ...input, maxTokens: 20 }), {
    inputs: 'Why is the sky blue?',
    parameters: { max_new_tokens: 20, details: true },
    stream: false,
  });
  assert.deepEqual(tgi.buildBody({ ...input, extraInputs: {} }).parameters, { details: true });
});

test('TGI stream events: token text, special tokens are not content, final details', () => {
  assert.deepEqual(tgi.parse(tokenEvent('Hello'), true).text, 'Hello');
  assert.equal(tgi.parse(tokenEvent('<|eot|>', true), true).text, '');
  const last = tgi.parse(FINAL, true);
  assert.deepEqual([last.text, last.finishReason, last.usage], ['', 'eos_token', { completion_tokens: 3 }]);
  const withInput = tgi.parse(
    { ...tokenEvent('!'), details: { finish_reason: 'length', generated_tokens: 2, input_length: 9 } },
    true,
  );
  assert.deepEqual([withInput.text, withInput.usage], ['!', { completion_tokens: 2, prompt_tokens: 9 }]);
  const err = tgi.parse({ error: 'Input validation error', error_type: 'validation' }, true).error;
  assert.deepEqual(err, { message: 'Input validation error', code: null, type: 'validation' });
});

test('TGI whole body: generated_text (also inside a one-element array) and details', () => {
  const body = { generated_text: 'Hello world', details: { finish_reason: 'length', generated_tokens: 2 } };
  const parsed = tgi.parse(body, false);
  assert.deepEqual(
    [parsed.text, parsed.finishReason, parsed.usage?.completion_tokens],
    ['Hello world', 'length', 2],
  );
  assert.equal(tgi.parse([{ generated_text: 'x' }], false).text, 'x');
  assert.equal(tgi.parse(null, false).text, '');
});

test('a TGI stream completes on the final details event; without it it is incomplete', () => {
  const ok = streamRecord([tokenEvent('Hello'), tokenEvent(' world'), FINAL]);
  assert.equal(ok.error, null);
  assert.deepEqual(
    ok.chunks.map((c) => c.text),
    ['Hello', ' world'],
  );
  assert.equal(ok.finishReason, 'eos_token');
  assert.equal(streamRecord([tokenEvent('Hello')]).error?.kind, 'stream_incomplete');
});

test('TGI paths: /generate_stream when streaming, /generate otherwise, --endpoint wins', () => {
  assert.equal(ENDPOINTS.huggingface_generate, tgi);
  assert.equal(endpointPathFor(tgi, true), '/generate_stream');
  assert.equal(endpointPathFor(tgi, false), '/generate');
  assert.equal(endpointPathFor(tgi, true, '/x'), '/x');
});
