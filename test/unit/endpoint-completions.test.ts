import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completions, promptOf } from '../../src/endpoint/completions.js';
import { ENDPOINTS, isEndpointTypeName } from '../../src/endpoint/registry.js';

test('completions body: prompt, max_tokens, extras, stream_options', () => {
  const body = completions.buildBody({
    model: 'm',
    messages: [{ role: 'user', content: 'Capital of France?' }],
    stream: true,
    maxTokens: 10,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: { min_tokens: 10 },
    turnExtra: { stream_options: { keep: true } },
  });
  assert.deepEqual(body, {
    model: 'm',
    prompt: 'Capital of France?',
    stream: true,
    max_tokens: 10,
    min_tokens: 10,
    stream_options: { keep: true, include_usage: true },
  });
});

test('prompt joins several message contents with a blank line', () => {
  assert.equal(
    promptOf([
      { role: 'system', content: 'a' },
      { role: 'user', content: 'b' },
    ]),
    'a\n\nb',
  );
  assert.equal(promptOf([]), '');
});

test('completions parse: text of every choice, finish reason, usage, errors', () => {
  const parsed = completions.parse(
    {
      object: 'text_completion',
      choices: [{ index: 0, text: ' Paris', finish_reason: 'length' }],
      usage: null,
    },
    true,
  );
  assert.deepEqual([parsed.text, parsed.finishReason, parsed.usage], [' Paris', 'length', null]);
  assert.equal(completions.parse({ choices: [{ index: 0, text: '' }] }, true).text, '');
  assert.equal(
    completions.parse({ choices: null, usage: { completion_tokens: 3 } }, true).usage?.completion_tokens,
    3,
  );
  assert.equal(completions.parse({ error: { message: 'bad', code: '429' } }, true).error?.code, 429);
});

test('registry maps endpoint names to adapters', () => {
  assert.equal(ENDPOINTS.chat.defaultPath, '/v1/chat/completions');
  assert.equal(ENDPOINTS.completions.defaultPath, '/v1/completions');
  assert.equal(isEndpointTypeName('chat'), true);
  assert.equal(isEndpointTypeName('toString'), false);
});
