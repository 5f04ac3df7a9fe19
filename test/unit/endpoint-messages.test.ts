/**
 * The `messages` endpoint (Anthropic Messages API) through its adapter: the body AIPerf's tutorial
 * describes, the streamed events and whole bodies it reads, and the headers a run sends with it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messages } from '../../src/endpoint/messages.js';
import type { BodyInput } from '../../src/endpoint/types.js';
import { headersOf } from '../../src/request/headers.js';

const input = (over: Partial<BodyInput> = {}): BodyInput => ({
  model: 'claude',
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: 'hello' },
    { role: 'user', content: 'again' },
  ],
  stream: true,
  maxTokens: 8,
  useLegacyMaxTokens: true,
  perChunkUsage: true,
  extraInputs: {},
  ...over,
});

test('messages body: system at top level, history as messages, max_tokens, then extra inputs', () => {
  const body = messages.buildBody(input({ extraInputs: { temperature: 0.7 }, turnExtra: { top_p: 0.9 } }));
  assert.deepEqual(body, {
    model: 'claude',
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'again' },
    ],
    max_tokens: 8,
    stream: true,
    system: 'be brief',
    temperature: 0.7,
    top_p: 0.9,
  });
});

test('messages body: max_tokens defaults to 1024 (the API requires it); no system field without one', () => {
  const { maxTokens: _drop, ...noMax } = input({
    messages: [{ role: 'user', content: 'hi' }],
    stream: false,
  });
  const body = messages.buildBody(noMax);
  assert.equal(body.max_tokens, 1024);
  assert.equal(body.stream, false);
  assert.equal('system' in body, false);
  assert.equal('stream_options' in body, false);
});

test('messages stream: text and thinking deltas, usage from message_start and message_delta, message_stop ends', () => {
  const start = messages.parse(
    {
      type: 'message_start',
      message: {
        type: 'message',
        content: [],
        usage: {
          input_tokens: 7,
          cache_read_input_tokens: 3,
          cache_creation_input_tokens: 2,
          output_tokens: 1,
        },
      },
    },
    true,
  );
  assert.equal(start.text, '');
  assert.deepEqual(start.usage, {
    prompt_tokens: 12,
    prompt_tokens_details: { cached_tokens: 3 },
    completion_tokens: 1,
  });
  assert.equal(start.usageMerges, true);
  const thinking = messages.parse(
    { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
    true,
  );
  assert.deepEqual([thinking.text, thinking.reasoning], ['', 'hmm']);
  const text = messages.parse(
    { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
    true,
  );
  assert.deepEqual([text.text, text.reasoning], ['Hi', '']);
  const signature = messages.parse(
    { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'x' } },
    true,
  );
  assert.equal(signature.text + signature.reasoning, '');
  const delta = messages.parse(
    { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } },
    true,
  );
  assert.deepEqual(delta.usage, { completion_tokens: 5 });
  assert.equal(delta.finishReason, 'end_turn');
  assert.equal(delta.streamEnd, undefined);
  assert.equal(messages.parse({ type: 'message_stop' }, true).streamEnd, true);
  for (const type of ['ping', 'content_block_start', 'content_block_stop']) {
    const parsed = messages.parse({ type, index: 0 }, true);
    assert.equal(parsed.text + parsed.reasoning, '');
    assert.equal(parsed.usage, null);
  }
});

test('messages: an error event or body is an in-band error', () => {
  const parsed = messages.parse(
    { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
    true,
  );
  assert.deepEqual(parsed.error, { message: 'Overloaded', code: null, type: 'overloaded_error' });
});

test('messages body reply: text, thinking and tool_use blocks, usage and stop_reason', () => {
  const parsed = messages.parse(
    {
      type: 'message',
      content: [
        { type: 'thinking', thinking: 'Let me see' },
        { type: 'text', text: 'The answer' },
        { type: 'tool_use', id: 't1', name: 'calc', input: { x: 1 } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 10, output_tokens: 8 },
    },
    false,
  );
  assert.equal(parsed.reasoning, 'Let me see');
  assert.equal(parsed.text, 'The answercalc{"x":1}');
  assert.equal(parsed.finishReason, 'tool_use');
  // No cache_read_input_tokens: the cache hit is unknown, not 0 (no cached_tokens at all).
  assert.deepEqual(parsed.usage, { prompt_tokens: 10, completion_tokens: 8 });
});

test('messages headers: x-api-key instead of Bearer, anthropic-version unless -H names it', () => {
  assert.deepEqual(headersOf({ endpointType: 'messages', headers: {}, apiKey: 'k' }), {
    'anthropic-version': '2023-06-01',
    'x-api-key': 'k',
  });
  assert.deepEqual(headersOf({ endpointType: 'messages', headers: { 'Anthropic-Version': '2024-01-01' } }), {
    'Anthropic-Version': '2024-01-01',
  });
  assert.deepEqual(headersOf({ endpointType: 'chat', headers: {}, apiKey: 'k' }), {
    authorization: 'Bearer k',
  });
});
