import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

/** Parses a response body as JSON (untyped, like the wire). */
async function jsonOf(res: Response | Promise<Response>): Promise<ReturnType<typeof JSON.parse>> {
  return JSON.parse(await (await res).text());
}

let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, reasoningTokens: 0 });
});
after(async () => {
  await sim.close();
});

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

function sseData(text: string): string[] {
  return text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
}

const chat = { model: 'm', messages: [{ role: 'user', content: 'Hello there, simulator.' }] };

test('fixed mode streams exactly max_tokens chunks, then usage and [DONE]', async () => {
  const res = await post('/v1/chat/completions', {
    ...chat,
    stream: true,
    max_completion_tokens: 7,
    stream_options: { include_usage: true },
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /text\/event-stream/);
  const data = sseData(await res.text());
  assert.equal(data.length, 7 + 2);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, 7).map((d) => JSON.parse(d));
  assert.deepEqual(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks.filter((c) => typeof c.choices[0].delta.content === 'string').length, 7);
  assert.equal(chunks[6].choices[0].finish_reason, 'length');
  assert.equal(chunks[5].choices[0].finish_reason, null);
  const usage = JSON.parse(data[7] as string);
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.completion_tokens, 7);
  assert.ok(usage.usage.prompt_tokens > 0);
  assert.equal(usage.usage.total_tokens, usage.usage.prompt_tokens + 7);
  assert.equal(typeof usage.usage.prompt_tokens_details.cached_tokens, 'number');
});

test('continuous_usage_stats puts running usage on every chunk', async () => {
  const res = await post('/v1/completions', {
    model: 'm',
    prompt: 'abc',
    stream: true,
    max_tokens: 3,
    stream_options: { continuous_usage_stats: true },
  });
  const chunks = sseData(await res.text())
    .slice(0, -1)
    .map((d) => JSON.parse(d));
  assert.deepEqual(
    chunks.map((c) => c.usage.completion_tokens),
    [1, 2, 3],
  );
  assert.equal(chunks[0].object, 'text_completion');
});

test('non-streaming chat and completions bodies', async () => {
  const c = await jsonOf(post('/v1/chat/completions', { ...chat, max_tokens: 4 }));
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices[0].message.role, 'assistant');
  assert.equal(c.choices[0].finish_reason, 'length');
  assert.equal(c.usage.completion_tokens, 4);
  const p = await jsonOf(post('/v1/completions', { model: 'm', prompt: [1, 2, 3, 4, 5] }));
  assert.equal(p.usage.prompt_tokens, 5, 'token-id prompts are used as-is');
  assert.equal(p.usage.completion_tokens, 16, 'default output length');
});

test('bad JSON and missing messages give 400 with an OpenAI error body', async () => {
  const bad = await post('/v1/chat/completions', '{not json');
  assert.equal(bad.status, 400);
  assert.equal(typeof (await jsonOf(bad)).error.message, 'string');
  const missing = await post('/v1/chat/completions', { model: 'm' });
  assert.equal(missing.status, 400);
  assert.equal((await jsonOf(missing)).error.code, 400);
  assert.equal((await post('/v1/nope', {})).status, 404);
  // A versioned API path the simulator does not have, or a known one behind a wrong prefix, is a 404
  // (a wrong --url or --endpoint), not the template type's any-path answer (found by a new user).
  assert.equal(
    (await post('/v2/chat', { model: 'm', messages: [{ role: 'user', content: 'hi' }] })).status,
    404,
  );
  assert.equal((await post('/wrong/v1/chat/completions', { model: 'm' })).status, 404);
  assert.equal((await post('/analyze', { model: 'm', text: 'hi' })).status, 200);
});

test('/health, /v1/models and /metrics with vLLM names', async () => {
  assert.equal((await fetch(`${sim.url}/health`)).status, 200);
  const models = await jsonOf(fetch(`${sim.url}/v1/models`));
  assert.equal(models.object, 'list');
  assert.equal(models.data.length, 1);
  const text = await (await fetch(`${sim.url}/metrics`)).text();
  for (const name of [
    'vllm:num_requests_running',
    'vllm:num_requests_waiting',
    'vllm:gpu_cache_usage_perc',
    'vllm:kv_cache_usage_perc',
    'vllm:prefix_cache_queries_total',
    'vllm:prefix_cache_hits_total',
    'vllm:prompt_tokens_total',
    'vllm:generation_tokens_total',
  ]) {
    assert.match(text, new RegExp(`^${name}\\{model_name="[^"]+"\\} [0-9.e+-]+$`, 'm'), name);
  }
});

test('reasoning mode streams reasoning_content before content', async () => {
  const r = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0, reasoningTokens: 3 });
  try {
    const res = await fetch(`${r.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ ...chat, stream: true, max_tokens: 2, stream_options: { include_usage: true } }),
    });
    const chunks = sseData(await res.text())
      .slice(0, -1)
      .map((d) => JSON.parse(d));
    const kinds = chunks.slice(0, 5).map((c) => ('reasoning_content' in c.choices[0].delta ? 'r' : 'c'));
    assert.deepEqual(kinds, ['r', 'r', 'r', 'c', 'c']);
    assert.equal(chunks[5].usage.completion_tokens_details.reasoning_tokens, 3);
  } finally {
    await r.close();
  }
});
