/** Failure classification beyond the fixture set (FORMAT.md §6.3), one request each, never retried. */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { chatChunk, inlineFixture, playFixturesInTests } from '../helpers/fixture-player.js';
import { sendOnce } from '../helpers/send-once.js';

const SSE = { 'content-type': 'text/event-stream' };
const fixtures = [
  inlineFixture('event-error', {
    status: 200,
    headers: SSE,
    writes: [
      { atMs: 0, data: chatChunk('Hi') },
      { atMs: 20, data: 'event: error\ndata: {"message":"engine died","code":"n/a"}\n\n' },
      { atMs: 21, data: 'data: [DONE]\n\n' },
    ],
    end: 'close',
  }),
  inlineFixture('tokens-then-hang', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'hang',
  }),
  inlineFixture('truncated', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'truncate',
    endAtMs: 20,
  }),
  inlineFixture('two-choices-one-finished', {
    status: 200,
    headers: SSE,
    writes: [
      {
        atMs: 0,
        data: 'data: {"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"},{"index":1,"delta":{"content":"b"},"finish_reason":null}]}\n\n',
      },
    ],
    end: 'close',
  }),
  inlineFixture('empty-503', { status: 503, headers: {}, body: '' }),
];

const { send, player: current } = playFixturesInTests(fixtures);

test('event: error inside a 200 stream is an in-band error (502) that keeps partial output', async () => {
  const raw = await send('event-error');
  assert.equal(raw.error?.kind, 'in_band_error');
  assert.equal(raw.error?.code, 502);
  assert.equal(raw.error?.message, 'engine died');
  assert.equal(raw.chunks[0]?.text, 'Hi');
  assert.equal(current().attempts('event-error'), 1);
});

test('connection refused is a connection error, not a throw', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const raw = await sendOnce({
    url: `http://127.0.0.1:${port}`,
    endpoint: 'chat',
    model: 'm',
    messages: [{ role: 'user', content: 'x' }],
    stream: true,
  });
  assert.equal(raw.error?.kind, 'connection_error');
  assert.match(raw.error?.type ?? '', /ECONNREFUSED/);
  assert.equal(raw.httpStatus, null);
});

test('cancellation via AbortSignal is error 499, keeps partial output, never sends a pre-aborted request', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const raw = await send('tokens-then-hang', { signal: controller.signal });
  assert.equal(raw.error?.kind, 'cancelled');
  assert.equal(raw.error?.code, 499);
  assert.equal(raw.error?.type, 'RequestCancellationError');
  assert.equal(raw.cancelled, true);
  assert.equal(raw.chunks.length, 1, 'partial output is kept');
  const pre = new AbortController();
  pre.abort();
  const early = await send('tokens-then-hang', { signal: pre.signal });
  assert.equal(early.error?.kind, 'cancelled');
  assert.equal(current().attempts('tokens-then-hang'), 1, 'a pre-aborted request is never sent');
});

test('timeout after some tokens keeps TTFT data; the hung socket is closed', async () => {
  const raw = await send('tokens-then-hang', { timeoutMs: 300 });
  assert.equal(raw.error?.kind, 'timeout');
  assert.equal(raw.error?.code, 408);
  assert.equal(raw.chunks.length, 1);
  assert.ok((raw.error?.failedAtNs ?? 0) - raw.startNs >= 300e6);
  const entry = current()
    .log.filter((e) => e.fixture === 'tokens-then-hang')
    .at(-1);
  const deadline = performance.now() + 2000;
  while (entry !== undefined && !entry.socketClosed && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.equal(entry?.socketClosed, true);
});

test('a body truncated without its last chunk is stream_incomplete with no clean end', async () => {
  const raw = await send('truncated');
  assert.equal(raw.error?.kind, 'stream_incomplete');
  assert.equal(raw.streamEndNs, null);
  assert.equal(raw.chunks.length, 1);
});

test('a clean end with one of two choices unfinished is stream_incomplete', async () => {
  const raw = await send('two-choices-one-finished');
  assert.equal(raw.error?.kind, 'stream_incomplete');
  assert.notEqual(raw.streamEndNs, null);
});

test('non-200 with an empty body: message falls back to the reason phrase', async () => {
  const raw = await send('empty-503');
  assert.equal(raw.error?.kind, 'http_status');
  assert.equal(raw.error?.code, 503);
  assert.equal(raw.error?.type, 'Service Unavailable');
  assert.equal(raw.error?.message, 'Service Unavailable');
});
