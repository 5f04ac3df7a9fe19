/**
 * Fixed mode with `itlMs: 0`: every token of a response is due at the same instant, so the
 * simulator emits them as one burst written at once. The wire content, the ground-truth stamps and
 * the after-N-tokens faults must be what they are when tokens are written one by one.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { outputText } from '../../src/simulator/responses.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

let sim: RunningSimulator;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tokenload-bursts-'));
  sim = await startSimulator({
    mode: 'fixed',
    ttftMs: 0,
    itlMs: 0,
    groundTruthLog: join(dir, 'truth.jsonl'),
  });
});
after(async () => {
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

interface RawReply {
  status: number;
  text: string;
  /** True when the body ended in a socket error (reset) instead of a clean end. */
  failed: boolean;
}

/** POSTs `body` and collects the raw body text, including what arrived before a reset. */
function post(path: string, body: unknown, fault?: string): Promise<RawReply> {
  const url = new URL(path, sim.url);
  return new Promise((resolve, reject) => {
    let status = 0;
    let text = '';
    let settled = false;
    const done = (failed: boolean): void => {
      if (settled) return;
      settled = true;
      resolve({ status, text, failed });
    };
    const req = request(url, {
      method: 'POST',
      headers: fault === undefined ? {} : { 'x-sim-fault': fault },
    });
    req.on('response', (res) => {
      status = res.statusCode ?? 0;
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        text += d;
      });
      res.on('end', () => done(false));
      res.on('error', () => done(true));
    });
    req.on('error', (err) => (status === 0 ? reject(err) : done(true)));
    req.end(JSON.stringify(body));
  });
}

const events = (text: string): string[] =>
  text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));

const chat = (maxTokens: number): Record<string, unknown> => ({
  model: 'm',
  messages: [{ role: 'user', content: 'Hello there, simulator.' }],
  stream: true,
  max_tokens: maxTokens,
  stream_options: { include_usage: true },
});

test('a burst carries every chunk, the usage chunk and [DONE], in order', async () => {
  const reply = await post('/v1/chat/completions', chat(20));
  assert.equal(reply.status, 200);
  const data = events(reply.text);
  assert.equal(data.length, 20 + 2);
  assert.equal(data.at(-1), '[DONE]');
  const chunks = data.slice(0, 20).map((d) => JSON.parse(d));
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks.map((c) => c.choices[0].delta.content).join(''), outputText(0, 20));
  assert.equal(chunks[19].choices[0].finish_reason, 'length');
  assert.equal(JSON.parse(data[20] as string).usage.completion_tokens, 20);
});

test('faults inside a burst: in-band error, truncation, reset after N tokens; role and multi-token chunks', async () => {
  const sse = events((await post('/v1/chat/completions', chat(6), 'sse-error:2')).text);
  assert.equal(sse.length, 4);
  assert.ok(JSON.parse(sse[2] as string).error.message);
  assert.equal(sse[3], '[DONE]');

  const truncated = await post('/v1/chat/completions', chat(6), 'truncate:3');
  assert.equal(truncated.failed, false);
  assert.equal(events(truncated.text).length, 3);
  assert.ok(!truncated.text.includes('[DONE]'));

  const reset = await post('/v1/chat/completions', chat(6), 'reset:2');
  assert.equal(reset.status, 200);
  assert.equal(reset.failed, true, 'the body read fails');
  assert.equal(events(reset.text).length, 2, 'the tokens before the reset arrive first');

  const resetAtOnce = await post('/v1/chat/completions', chat(6), 'reset:0');
  assert.equal(resetAtOnce.status, 200, 'the headers written in the same turn still arrive');
  assert.equal(resetAtOnce.failed, true);
  assert.equal(events(resetAtOnce.text).length, 0);

  const role = events((await post('/v1/chat/completions', chat(6), 'role-chunk')).text);
  assert.deepEqual(JSON.parse(role[0] as string).choices[0].delta, { role: 'assistant', content: null });
  assert.equal(role.length, 1 + 6 + 2);
  assert.equal(events((await post('/v1/chat/completions', chat(6), 'multi-token:4')).text).length, 2 + 2);
});

test('the Responses and TGI routes burst too, with the reset after their tokens', async () => {
  const responses = await post('/v1/responses', {
    model: 'm',
    input: 'hi',
    stream: true,
    max_output_tokens: 5,
  });
  assert.equal(responses.status, 200);
  assert.match(responses.text, /response\.completed/);
  const tgi = await post('/generate_stream', { inputs: 'hi', parameters: { max_new_tokens: 4 } });
  assert.equal(events(tgi.text).length, 4);
  const reset = await post(
    '/generate_stream',
    { inputs: 'hi', parameters: { max_new_tokens: 4 } },
    'reset:2',
  );
  assert.equal(reset.failed, true);
  assert.equal(events(reset.text).length, 2);
});

test('ground truth stamps one write time per token chunk', async () => {
  const reply = await post('/v1/chat/completions', { ...chat(5), 'x-id': 1 });
  assert.equal(reply.status, 200);
  await sim.close();
  const lines = readFileSync(join(dir, 'truth.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const last = lines.at(-1);
  assert.equal(last.status, 200);
  assert.equal(last.output_tokens, 5);
  assert.equal(last.chunk_write_ns.length, 5);
  assert.equal(last.first_token_write_ns, last.chunk_write_ns[0]);
  const reset = lines.find((l) => l.fault === 'reset');
  assert.equal(reset.chunk_write_ns.length, 2);
  sim = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 });
});
