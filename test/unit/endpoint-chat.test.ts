import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chat } from '../../src/endpoint/chat.js';
import type { BodyInput } from '../../src/endpoint/types.js';

const input = (over: Partial<BodyInput> = {}): BodyInput => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  maxTokens: 8,
  useLegacyMaxTokens: false,
  perChunkUsage: false,
  extraInputs: {},
  ...over,
});

test('chat body: fields, then extra inputs, then turn extra, then stream_options', () => {
  const body = chat.buildBody(
    input({
      extraInputs: { ignore_eos: true, temperature: 0, stream_options: { foo: 1 } },
      turnExtra: { temperature: 0.5 },
      perChunkUsage: true,
    }),
  );
  assert.deepEqual(body, {
    model: 'm',
    messages: [{ role: 'user', content: 'hi' }],
    stream: true,
    max_completion_tokens: 8,
    ignore_eos: true,
    temperature: 0.5,
    stream_options: { foo: 1, include_usage: true, continuous_usage_stats: true },
  });
});

test('chat body: legacy max_tokens, no max without maxTokens, no stream_options when not streaming', () => {
  assert.equal(chat.buildBody(input({ useLegacyMaxTokens: true })).max_tokens, 8);
  const { maxTokens: _drop, ...noMax } = input();
  const body = chat.buildBody({ ...noMax, stream: false });
  assert.equal('max_completion_tokens' in body, false);
  assert.equal('stream_options' in body, false);
});

test('chunk parse: content, reasoning, tool calls; empty and null are not text, whitespace is', () => {
  const chunk = (delta: unknown, extra: Record<string, unknown> = {}) => ({
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, finish_reason: null }],
    ...extra,
  });
  assert.equal(chat.parse(chunk({ content: ' ' }), true).text, ' ');
  assert.equal(chat.parse(chunk({ content: '' }), true).text, '');
  assert.equal(chat.parse(chunk({ role: 'assistant', content: null }), true).text, '');
  assert.equal(chat.parse(chunk({ reasoning_content: 'think' }), true).reasoning, 'think');
  assert.equal(chat.parse(chunk({ reasoning: 'think2', content: 'x' }), true).reasoning, 'think2');
  const tool = chunk({ tool_calls: [{ index: 0, function: { name: 'get', arguments: '{"a":1}' } }] });
  assert.equal(chat.parse(tool, true).text, 'get{"a":1}');
});

test('chunk parse: choices [], null or absent, usage null, finish reasons per choice', () => {
  for (const choices of [[], null, undefined]) {
    const parsed = chat.parse({ object: 'chat.completion.chunk', choices, usage: null }, true);
    assert.deepEqual([parsed.text, parsed.usage, parsed.error], ['', null, null]);
  }
  const usage = { prompt_tokens: 1, completion_tokens: 2 };
  assert.deepEqual(chat.parse({ choices: [], usage }, true).usage, usage);
  const parsed = chat.parse(
    {
      object: 'chat.completion.chunk',
      choices: [
        { index: 0, delta: {}, finish_reason: 'stop' },
        { index: 1, delta: { content: 'a' }, finish_reason: null },
      ],
    },
    true,
  );
  assert.equal(parsed.finishReason, 'stop');
  assert.deepEqual(parsed.choices, [
    { index: 0, finishReason: 'stop' },
    { index: 1, finishReason: null },
  ]);
});

test('whole chat.completion body: text from message', () => {
  const body = {
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello' }, finish_reason: 'stop' }],
    usage: { completion_tokens: 1 },
  };
  const parsed = chat.parse(body, false);
  assert.deepEqual([parsed.text, parsed.finishReason, parsed.usage?.completion_tokens], ['Hello', 'stop', 1]);
});

test('in-band error: message, 400–599 code, type; fallbacks', () => {
  const err = chat.parse({ error: { message: 'boom', code: 503, type: 'ServiceUnavailableError' } }, true);
  assert.deepEqual(err.error, { message: 'boom', code: 503, type: 'ServiceUnavailableError' });
  assert.deepEqual(chat.parse({ error: { code: 42 }, message: 'top' }, true).error, {
    message: 'top',
    code: null,
    type: null,
  });
  assert.equal(chat.parse({ error: 'plain' }, true).error?.message, 'plain');
  assert.equal(chat.parse({ error: {} }, true).error?.message, '{"error":{}}');
  assert.equal(chat.parse({ error: null, choices: [] }, true).error, null);
});

test('non-object payloads parse to nothing', () => {
  for (const json of [null, 3, 'x', [1]]) assert.deepEqual(chat.parse(json, true).text, '');
});
