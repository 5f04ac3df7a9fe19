import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { spawnSimulator } from '../../src/simulator/spawn.js';

/** Parses a response body as JSON (untyped, like the wire). */
async function jsonOf(res: Response | Promise<Response>): Promise<ReturnType<typeof JSON.parse>> {
  return JSON.parse(await (await res).text());
}

let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1, retryAfterS: 3 });
});
after(async () => {
  await sim.close();
});

const body = JSON.stringify({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  stream: true,
  max_tokens: 6,
  stream_options: { include_usage: true },
});

function send(fault: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${sim.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'x-sim-fault': fault },
    body,
    signal,
  });
}

const events = (text: string): string[] => text.split('\n\n').filter((e) => e.startsWith('data: '));

test('429 with Retry-After, 500 and 503 with OpenAI error bodies', async () => {
  const r429 = await send('429');
  assert.equal(r429.status, 429);
  assert.equal(r429.headers.get('retry-after'), '3');
  assert.equal(typeof (await jsonOf(r429)).error.message, 'string');
  assert.equal((await send('500')).status, 500);
  const r503 = await send('503');
  assert.equal(r503.status, 503);
  assert.equal(r503.headers.get('retry-after'), '3');
});

test('in-band SSE error after N tokens', async () => {
  const res = await send('sse-error:2');
  assert.equal(res.status, 200);
  const ev = events(await res.text());
  assert.equal(ev.length, 4);
  assert.ok(JSON.parse((ev[2] as string).slice(6)).error.message);
  assert.equal(ev[3], 'data: [DONE]');
});

test('truncated stream ends without finish_reason or [DONE]', async () => {
  const text = await (await send('truncate:3')).text();
  const ev = events(text);
  assert.equal(ev.length, 3);
  assert.ok(!text.includes('[DONE]'));
  assert.ok(!text.includes('"finish_reason":"length"'));
});

test('TCP reset mid-stream makes the body read fail', async () => {
  const res = await send('reset:2');
  assert.equal(res.status, 200);
  await assert.rejects(res.text());
});

test('hung request sends no headers until the client aborts', async () => {
  const ctrl = new AbortController();
  const pending = send('hang', ctrl.signal);
  const raced = await Promise.race([
    pending.then(() => 'headers'),
    new Promise((r) => setTimeout(() => r('none'), 300)),
  ]);
  assert.equal(raced, 'none');
  ctrl.abort();
  await assert.rejects(pending, { name: 'AbortError' });
  await new Promise((r) => setTimeout(r, 100));
  assert.ok(sim.stats().clientAborts >= 1, 'the server saw the client go away');
});

test('slow headers delay the response, then it completes', async () => {
  const t0 = performance.now();
  const res = await send('slow-headers:150');
  const fast = performance.now();
  const normal = await send('none');
  await normal.text();
  assert.ok(fast - t0 > (performance.now() - fast) / 2);
  assert.equal(events(await res.text()).at(-1), 'data: [DONE]');
});

test('role-only first chunk and multi-token chunks', async () => {
  const role = events(await (await send('role-chunk')).text());
  const first = JSON.parse((role[0] as string).slice(6));
  assert.deepEqual(first.choices[0].delta, { role: 'assistant', content: null });
  assert.equal(role.length, 1 + 6 + 2);
  const multi = events(await (await send('multi-token:4')).text());
  assert.equal(multi.length, 2 + 2, '6 tokens in chunks of 4 and 2, then usage and [DONE]');
});

test('seeded fault rates are deterministic', async () => {
  const statuses = async (): Promise<number[]> => {
    const s = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0, faultRate500: 0.5, seed: 42 });
    const out: number[] = [];
    for (let i = 0; i < 12; i++) {
      const r = await fetch(`${s.url}/v1/completions`, {
        method: 'POST',
        body: '{"prompt":"x","max_tokens":1}',
      });
      await r.arrayBuffer();
      out.push(r.status);
    }
    await s.close();
    return out;
  };
  const a = await statuses();
  assert.deepEqual(await statuses(), a);
  assert.ok(a.includes(500) && a.includes(200));
});

test('spawnSimulator runs a child that answers, and close() ends it', async () => {
  const child = await spawnSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
  assert.ok(child.pid > 0);
  const res = await fetch(`${child.url}/v1/completions`, {
    method: 'POST',
    body: '{"prompt":"hello","max_tokens":2}',
  });
  assert.equal((await jsonOf(res)).usage.completion_tokens, 2);
  await child.close();
  assert.throws(() => process.kill(child.pid, 0), { code: 'ESRCH' });
});
