/**
 * The simulator's generation routes side by side, as a client reads them: every API's stream
 * carries the same token chunks (reasoning first, `tokensPerChunk` per chunk, a chunk ends at the
 * reasoning boundary) in its own wire shape, ends its own way after an in-band error, and takes the
 * faults it takes. Chat and completions stream headers set `connection: keep-alive` themselves;
 * the Responses and TGI ones leave it to Node (which adds `Keep-Alive: timeout=…`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { outputText } from '../../src/simulator/responses.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

const REASONING = 2;
const PER_CHUNK = 2;
const MAX_TOKENS = 5;
/** Tokens per chunk: chunks of PER_CHUNK that never cross the reasoning boundary. */
const CHUNK_SIZES = chunkSizes(REASONING, MAX_TOKENS, PER_CHUNK);

let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({
    mode: 'fixed',
    ttftMs: 0,
    itlMs: 1,
    reasoningTokens: REASONING,
    tokensPerChunk: PER_CHUNK,
  });
});
after(async () => {
  await sim.close();
});

function chunkSizes(reasoning: number, content: number, perChunk: number): number[] {
  const sizes: number[] = [];
  for (const part of [reasoning, content]) {
    for (let left = part; left > 0; left -= perChunk) sizes.push(Math.min(perChunk, left));
  }
  return sizes;
}

interface Reply {
  status: number;
  /** Header names as sent, lower-cased, in order. */
  headerNames: string[];
  text: string;
  /** The exchange ended in a socket error (reset) instead of a clean end. */
  failed: boolean;
}

function post(path: string, body: unknown, fault?: string): Promise<Reply> {
  return new Promise((resolve) => {
    const reply: Reply = { status: 0, headerNames: [], text: '', failed: false };
    let settled = false;
    const done = (failed: boolean): void => {
      if (settled) return;
      settled = true;
      resolve({ ...reply, failed });
    };
    const req = request(new URL(path, sim.url), {
      method: 'POST',
      headers: fault === undefined ? {} : { 'x-sim-fault': fault },
    });
    req.on('response', (res) => {
      reply.status = res.statusCode ?? 0;
      reply.headerNames = res.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase());
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        reply.text += d;
      });
      res.on('end', () => done(false));
      res.on('error', () => done(true));
    });
    req.on('error', () => done(true));
    req.end(JSON.stringify(body));
  });
}

interface Frame {
  event: string | null;
  data: string;
}

const frames = (text: string): Frame[] =>
  text
    .split('\n\n')
    .filter((f) => f !== '')
    .map((f) => {
      const event = /^event: (.*)$/m.exec(f)?.[1] ?? null;
      return { event, data: /^data: (.*)$/m.exec(f)?.[1] ?? '' };
    });

const json = (f: Frame | undefined): ReturnType<typeof JSON.parse> => JSON.parse(f?.data ?? 'null');

const ROUTES = {
  chat: {
    path: '/v1/chat/completions',
    body: (stream: boolean) => ({
      model: 'm',
      messages: [{ role: 'user', content: 'Hello there.' }],
      stream,
      max_tokens: MAX_TOKENS,
      stream_options: stream ? { include_usage: true } : undefined,
    }),
  },
  completions: {
    path: '/v1/completions',
    body: (stream: boolean) => ({ model: 'm', prompt: 'Hello there.', stream, max_tokens: MAX_TOKENS }),
  },
  responses: {
    path: '/v1/responses',
    body: (stream: boolean) => ({ model: 'm', input: 'Hello there.', stream, max_output_tokens: MAX_TOKENS }),
  },
  tgi: {
    path: '/generate_stream',
    body: () => ({ inputs: 'Hello there.', parameters: { max_new_tokens: MAX_TOKENS, details: true } }),
  },
  tgiBody: {
    path: '/generate',
    body: () => ({ inputs: 'Hello there.', parameters: { max_new_tokens: MAX_TOKENS } }),
  },
};

const send = (route: keyof typeof ROUTES, stream: boolean, fault?: string): Promise<Reply> =>
  post(ROUTES[route].path, ROUTES[route].body(stream), fault);

test('chat: one chunk per piece, reasoning_content then content, role first, finish last, usage, [DONE]', async () => {
  const reply = await send('chat', true);
  assert.equal(reply.status, 200);
  assert.ok(reply.headerNames.includes('connection') && !reply.headerNames.includes('keep-alive'));
  const f = frames(reply.text);
  assert.equal(f.length, CHUNK_SIZES.length + 2);
  assert.equal(f.at(-1)?.data, '[DONE]');
  const deltas = f.slice(0, CHUNK_SIZES.length).map((x) => json(x).choices[0]);
  assert.equal(deltas[0].delta.role, 'assistant');
  assert.equal(deltas.filter((d) => 'role' in d.delta).length, 1);
  assert.equal(deltas.map((d) => d.delta.reasoning_content ?? '').join(''), outputText(0, REASONING));
  assert.equal(deltas.map((d) => d.delta.content ?? '').join(''), outputText(0, MAX_TOKENS));
  assert.deepEqual(
    deltas.map((d) => d.finish_reason),
    CHUNK_SIZES.map((_, i) => (i === CHUNK_SIZES.length - 1 ? 'length' : null)),
  );
  const usage = json(f[CHUNK_SIZES.length]).usage;
  assert.equal(usage.completion_tokens, REASONING + MAX_TOKENS);
  assert.equal(usage.completion_tokens_details.reasoning_tokens, REASONING);
});

test('Responses: created, reasoning then output_text deltas per chunk, completed with the whole response', async () => {
  const reply = await send('responses', true);
  assert.equal(reply.status, 200);
  assert.ok(reply.headerNames.includes('keep-alive'), 'connection headers left to Node');
  const f = frames(reply.text);
  const reasoningChunks = chunkSizes(REASONING, 0, PER_CHUNK).length;
  assert.deepEqual(
    f.map((x) => x.event),
    [
      'response.created',
      ...CHUNK_SIZES.map((_, i) =>
        i < reasoningChunks ? 'response.reasoning_text.delta' : 'response.output_text.delta',
      ),
      'response.completed',
    ],
  );
  assert.deepEqual(
    f.map((x) => json(x).type),
    f.map((x) => x.event),
  );
  const deltas = f.slice(1, -1).map((x) => json(x).delta);
  assert.equal(deltas.slice(0, reasoningChunks).join(''), outputText(0, REASONING));
  assert.equal(deltas.slice(reasoningChunks).join(''), outputText(0, MAX_TOKENS));
  const completed = json(f.at(-1)).response;
  assert.equal(completed.status, 'completed');
  const texts = (output: Array<{ type: string; content: Array<{ text: string }> }>) =>
    output.map((o) => [o.type, o.content[0]?.text]);
  assert.deepEqual(texts(completed.output), [
    ['reasoning', outputText(0, REASONING)],
    ['message', outputText(0, MAX_TOKENS)],
  ]);
  assert.equal(completed.usage.output_tokens, REASONING + MAX_TOKENS);
  assert.equal(completed.usage.output_tokens_details.reasoning_tokens, REASONING);
  assert.equal(completed.usage.total_tokens, completed.usage.input_tokens + REASONING + MAX_TOKENS);
  assert.ok(!reply.text.includes('[DONE]'));

  const body = JSON.parse((await send('responses', false)).text);
  assert.deepEqual(texts(body.output), texts(completed.output));
  assert.deepEqual(body.usage, completed.usage);
});

test('TGI: one token event per chunk, the last with generated_text and details; no [DONE]', async () => {
  const reply = await send('tgi', true);
  assert.equal(reply.status, 200);
  const events = frames(reply.text).map(json);
  assert.equal(events.length, CHUNK_SIZES.length);
  let sent = 0;
  for (const [i, e] of events.entries()) {
    sent += CHUNK_SIZES[i] ?? 0;
    assert.equal(e.index, sent - 1);
    assert.equal(e.token.id, sent - 1);
    const isLast = i === events.length - 1;
    assert.equal(e.generated_text, isLast ? outputText(0, REASONING) + outputText(0, MAX_TOKENS) : null);
    assert.equal(e.details === null, !isLast);
  }
  const last = events.at(-1);
  assert.equal(last.details.finish_reason, 'length');
  assert.equal(last.details.generated_tokens, REASONING + MAX_TOKENS);
  assert.ok(!reply.text.includes('[DONE]'));
  const body = JSON.parse((await send('tgiBody', false)).text);
  assert.deepEqual(body, { generated_text: last.generated_text, details: last.details });
});

test('an in-band error after N tokens ends each stream the way its API does', async () => {
  const n = REASONING + PER_CHUNK;
  const tokenChunks = chunkSizes(REASONING, n - REASONING, PER_CHUNK).length;
  const chat = frames((await send('chat', true, `sse-error:${n}`)).text);
  assert.equal(chat.length, tokenChunks + 2);
  assert.equal(typeof json(chat.at(-2)).error.message, 'string');
  assert.equal(chat.at(-1)?.data, '[DONE]');

  const responses = frames((await send('responses', true, `sse-error:${n}`)).text);
  assert.equal(responses.length, 1 + tokenChunks + 1);
  assert.equal(responses.at(-1)?.event, 'error');
  assert.equal(json(responses.at(-1)).type, 'error');

  const tgi = frames((await send('tgi', true, `sse-error:${n}`)).text);
  assert.equal(tgi.length, tokenChunks + 1);
  assert.equal(json(tgi.at(-1)).error_type, 'generation');
});

test('chat and completions bodies take the after-N-tokens faults: 500, half a body, reset', async () => {
  for (const route of ['chat', 'completions'] as const) {
    const whole = await send(route, false);
    const failed = await send(route, false, 'sse-error');
    assert.equal(failed.status, 500);
    assert.equal(typeof JSON.parse(failed.text).error.message, 'string');
    const truncated = await send(route, false, 'truncate');
    assert.equal(truncated.status, 200);
    assert.equal(truncated.failed, false);
    // Half of a body like `whole` (their ids may differ by a digit).
    assert.ok(Math.abs(truncated.text.length - whole.text.length / 2) <= 1);
    assert.throws(() => JSON.parse(truncated.text));
    assert.equal((await send(route, false, 'reset')).failed, true);
  }
});

test('Responses and TGI take only the after-N-tokens faults, and only on a stream', async () => {
  for (const [route, stream] of [
    ['responses', true],
    ['responses', false],
    ['tgi', true],
    ['tgiBody', false],
  ] as const) {
    const plain = await send(route, stream);
    const plainFrames = frames(plain.text).length;
    for (const fault of ['role-chunk', 'multi-token:3']) {
      const reply = await send(route, stream, fault);
      assert.equal(reply.status, 200);
      assert.equal(frames(reply.text).length, plainFrames, `${route} ${fault}`);
    }
    if (stream) continue;
    for (const fault of ['sse-error', 'truncate', 'reset']) {
      const reply = await send(route, stream, fault);
      assert.equal(reply.status, 200, `${route} ${fault}`);
      assert.equal(reply.failed, false);
      assert.deepEqual(Object.keys(JSON.parse(reply.text)), Object.keys(JSON.parse(plain.text)));
    }
  }
});

test('multi-token and role-chunk faults reshape chat and completions streams', async () => {
  const k = PER_CHUNK + 1;
  const multi = frames((await send('completions', true, `multi-token:${k}`)).text);
  assert.equal(multi.length, chunkSizes(REASONING, MAX_TOKENS, k).length + 1);
  const chat = frames((await send('chat', true, 'role-chunk')).text);
  assert.deepEqual(json(chat[0]).choices[0].delta, { role: 'assistant', content: null });
  assert.equal(chat.length, 1 + CHUNK_SIZES.length + 2);
  const completions = frames((await send('completions', true, 'role-chunk')).text);
  assert.equal(completions.length, CHUNK_SIZES.length + 1, 'completions have no role chunk');
});

/** Resolves once `check` holds (polled on the event loop; no deadline: the test runner has one). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((r) => setTimeout(r, 2));
}

test('a client that leaves a non-streamed request is recorded 499 with the tokens generated so far, on every route', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-sim-routes-'));
  const truthPath = join(dir, 'truth.jsonl');
  // The first token is generated on arrival; the next one is due far later than the client stays.
  const slow = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 600_000, groundTruthLog: truthPath });
  const routes = ['chat', 'completions', 'responses', 'tgiBody'] as const;
  try {
    for (const [i, route] of routes.entries()) {
      const ctrl = new AbortController();
      const pending = fetch(`${slow.url}${ROUTES[route].path}`, {
        method: 'POST',
        body: JSON.stringify(ROUTES[route].body(false)),
        signal: ctrl.signal,
      }).catch(() => undefined);
      await until(() => slow.stats().running === 1);
      ctrl.abort();
      await pending;
      await until(() => slow.stats().clientAborts === i + 1);
    }
    assert.equal(slow.stats().generationTokens, routes.length);
  } finally {
    await slow.close();
  }
  const lines = readFileSync(truthPath, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(
    lines.map((l) => [l.endpoint, l.status, l.output_tokens]),
    [
      ['chat', 499, 1],
      ['completion', 499, 1],
      ['responses', 499, 1],
      ['generate', 499, 1],
    ],
  );
});
