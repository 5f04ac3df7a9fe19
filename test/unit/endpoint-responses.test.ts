import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordBuilder } from '../../src/client/record-builder.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { responses, responsesUsage } from '../../src/endpoint/responses.js';
import type { RawRecord } from '../../src/record/types.js';

const USAGE = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 5,
  output_tokens_details: { reasoning_tokens: 2 },
  total_tokens: 17,
};

/** Feeds an SSE body to a record builder for the responses adapter and ends it cleanly. */
function streamRecord(events: Array<{ event?: string; data: unknown }>): RawRecord {
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
    path: '/v1/responses',
    headers: {},
    body: '{}',
    stream: true,
    adapter: responses,
    timeoutMs: 1000,
  });
  builder.onHeaders(200, { 'content-type': 'text/event-stream' }, 'OK', 1);
  let at = 2;
  for (const e of events) {
    const head = e.event === undefined ? '' : `event: ${e.event}\n`;
    builder.onData(Buffer.from(`${head}data: ${JSON.stringify(e.data)}\n\n`), at++);
  }
  return builder.end(at);
}

test('responses body: input messages, stream, max_output_tokens, extras last', () => {
  const body = responses.buildBody({
    model: 'm',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null },
    ],
    stream: true,
    maxTokens: 32,
    useLegacyMaxTokens: true,
    perChunkUsage: true,
    extraInputs: { temperature: 0 },
    turnExtra: { max_output_tokens: 8 },
  });
  assert.deepEqual(body, {
    model: 'm',
    input: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: '' },
    ],
    stream: true,
    max_output_tokens: 8,
    temperature: 0,
  });
});

test('responses usage maps to chat-style usage', () => {
  assert.deepEqual(responsesUsage(USAGE), {
    prompt_tokens: 12,
    completion_tokens: 5,
    total_tokens: 17,
    prompt_tokens_details: { cached_tokens: 4 },
    completion_tokens_details: { reasoning_tokens: 2 },
  });
  assert.equal(responsesUsage(null), null);
  assert.deepEqual(responsesUsage({ output_tokens: 'x' }), {});
});

test('responses stream events: text and reasoning deltas, done events ignored, terminal usage', () => {
  const p = (data: unknown) => responses.parse(data, true);
  assert.equal(p({ type: 'response.output_text.delta', delta: ' Paris' }).text, ' Paris');
  assert.equal(p({ type: 'response.reasoning_text.delta', delta: 'think' }).reasoning, 'think');
  assert.equal(p({ type: 'response.reasoning_summary_text.delta', delta: 'sum' }).reasoning, 'sum');
  assert.equal(p({ type: 'response.output_text.done', text: ' Paris' }).text, '');
  const done = p({
    type: 'response.completed',
    response: {
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'x' }] }],
      usage: USAGE,
    },
  });
  assert.deepEqual([done.text, done.finishReason, done.usage?.completion_tokens], ['', 'completed', 5]);
  const cut = p({
    type: 'response.incomplete',
    response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage: USAGE },
  });
  assert.equal(cut.finishReason, 'max_output_tokens');
  const failed = p({
    type: 'response.failed',
    response: { status: 'failed', error: { code: 'server_error', message: 'boom' } },
  });
  assert.deepEqual(failed.error, { message: 'boom', code: null, type: 'server_error' });
  assert.equal(p({ type: 'error', code: '429', message: 'slow down' }).error?.code, 429);
  assert.equal(p({ type: 'response.created', response: { status: 'in_progress' } }).finishReason, null);
});

test('responses whole body: output_text parts and reasoning items, status, usage', () => {
  const parsed = responses.parse(
    {
      object: 'response',
      status: 'completed',
      error: null,
      output: [
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'plan' }] },
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'Hello', annotations: [] },
            { type: 'refusal', refusal: 'no' },
            { type: 'output_text', text: ' world' },
          ],
        },
      ],
      usage: USAGE,
    },
    false,
  );
  assert.deepEqual(
    [parsed.text, parsed.reasoning, parsed.finishReason, parsed.error, parsed.usage?.prompt_tokens],
    ['Hello world', 'plan', 'completed', null, 12],
  );
  assert.equal(responses.parse({ output_text: 'sdk' }, false).text, 'sdk');
  const call = { type: 'function_call', call_id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' };
  assert.equal(
    responses.parse({ status: 'completed', output: [call] }, false).text,
    'get_weather{"city":"Paris"}',
    'a function call answer is output, as chat tool calls are',
  );
  assert.equal(responses.parse({ error: { message: 'bad', code: 400 } }, false).error?.code, 400);
});

test('a responses stream completes on response.completed without [DONE]; cut short it is incomplete', () => {
  const events = [
    { event: 'response.created', data: { type: 'response.created', response: { status: 'in_progress' } } },
    { event: 'response.reasoning_text.delta', data: { type: 'response.reasoning_text.delta', delta: 'hm' } },
    { event: 'response.output_text.delta', data: { type: 'response.output_text.delta', delta: 'Hi' } },
    { event: 'response.output_text.delta', data: { type: 'response.output_text.delta', delta: ' there' } },
  ];
  const completed = {
    event: 'response.completed',
    data: { type: 'response.completed', response: { status: 'completed', usage: USAGE } },
  };
  const ok = streamRecord([...events, completed]);
  assert.equal(ok.error, null);
  assert.deepEqual(
    ok.chunks.map((c) => [c.text, c.reasoning]),
    [
      ['', 'hm'],
      ['Hi', ''],
      [' there', ''],
    ],
  );
  assert.deepEqual([ok.finishReason, ok.usage?.completion_tokens], ['completed', 5]);
  assert.equal(streamRecord(events).error?.kind, 'stream_incomplete');
  const failed = streamRecord([
    ...events,
    { event: 'error', data: { type: 'error', code: 'server_error', message: 'overloaded' } },
  ]);
  assert.deepEqual(
    [failed.error?.kind, failed.error?.code, failed.error?.message],
    ['in_band_error', 502, 'overloaded'],
  );
});

test('registry has responses at /v1/responses', () => {
  assert.equal(ENDPOINTS.responses.defaultPath, '/v1/responses');
  assert.equal(ENDPOINTS.responses.streamable, true);
});
