/**
 * Timeouts, cancellation and queueing of many requests on one client (one shared deadline timer,
 * one abort listener per signal) against loopback streams: each request times out on its own
 * budget, measured from its own send stamp; one shared signal cancels every request still in
 * flight; the client leaves no listener behind; requests beyond the connection count wait their
 * turn, a request that times out while waiting is never sent, the client still serves the request
 * after an aborted one, and closing it fails the requests still waiting.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { test } from 'node:test';
import type { SendRequest } from '../../src/client/types.js';
import { createHttpClient } from '../../src/client/undici-client.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { chatChunk, inlineFixture, playFixturesInTests } from '../helpers/fixture-player.js';
import { oneOffIdentity } from '../helpers/send-once.js';

const { player } = playFixturesInTests([
  inlineFixture('hang', {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'hang',
  }),
  inlineFixture('quick', {
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    writes: [{ atMs: 20, data: `${chatChunk('Hi')}${chatChunk(null, 'stop')}data: [DONE]\n\n` }],
    end: 'close',
  }),
]);

function hanging(timeoutMs: number, signal?: AbortSignal, fixture = 'hang'): SendRequest {
  return {
    identity: oneOffIdentity('test-model'),
    path: '/v1/chat/completions',
    headers: { 'x-fixture': fixture },
    body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'x' }], stream: true }),
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs,
    ...(signal === undefined ? {} : { signal }),
  };
}

test('concurrent requests time out on their own budgets, measured from their own send', async () => {
  const client = createHttpClient({ url: player().origin, connections: 4 });
  try {
    const budgets = [400, 150, 300, 150];
    const records = await Promise.all(budgets.map((ms) => client.send(hanging(ms))));
    records.forEach((raw, i) => {
      const budget = budgets[i] as number;
      assert.equal(raw.error?.kind, 'timeout');
      assert.equal(raw.chunks.length, 1, 'the token before the hang is kept');
      assert.ok(
        (raw.error?.failedAtNs ?? 0) - raw.startNs >= budget * 1e6,
        `request ${i} not before ${budget} ms`,
      );
    });
    const order = records.map((raw, i) => [raw.endNs, budgets[i]] as const).sort((a, b) => a[0] - b[0]);
    assert.deepEqual(
      order.map(([, budget]) => budget),
      [150, 150, 300, 400],
    );
  } finally {
    await client.close();
  }
});

test('one shared signal cancels every request in flight and leaves no listener', async () => {
  const client = createHttpClient({ url: player().origin, connections: 8 });
  const controller = new AbortController();
  try {
    const pending = Array.from({ length: 6 }, () => client.send(hanging(10_000, controller.signal)));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
    controller.abort(new Error('run stopped'));
    const records = await Promise.all(pending);
    for (const raw of records) {
      assert.equal(raw.error?.kind, 'cancelled');
      assert.equal(raw.cancelled, true);
      assert.match(raw.error?.message ?? '', /run stopped/);
    }
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  } finally {
    await client.close();
  }
});

test('requests that finish remove their listener from a long-lived signal', async () => {
  const client = createHttpClient({ url: player().origin, connections: 2 });
  const controller = new AbortController();
  try {
    const records = await Promise.all([
      client.send(hanging(100, controller.signal)),
      client.send(hanging(120, controller.signal)),
    ]);
    for (const raw of records) assert.equal(raw.error?.kind, 'timeout');
    assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  } finally {
    await client.close();
  }
});

test('requests beyond the connection count wait their turn and all complete', async () => {
  const client = createHttpClient({ url: player().origin, connections: 2 });
  try {
    const records = await Promise.all(
      Array.from({ length: 7 }, () => client.send(hanging(5000, undefined, 'quick'))),
    );
    for (const raw of records) {
      assert.equal(raw.error, null);
      assert.equal(raw.chunks.length, 1);
    }
  } finally {
    await client.close();
  }
});

test('a request that times out while waiting for a connection is never sent; the next one is', async () => {
  const client = createHttpClient({ url: player().origin, connections: 1 });
  try {
    const sent = player().attempts('quick');
    const blocker = client.send(hanging(300));
    const starved = client.send(hanging(100, undefined, 'quick'));
    const after = client.send(hanging(5000, undefined, 'quick'));
    const [blocked, waited, served] = await Promise.all([blocker, starved, after]);
    assert.equal(blocked.error?.kind, 'timeout');
    assert.equal(waited.error?.kind, 'timeout');
    assert.equal(waited.httpStatus, null);
    assert.equal(served.error, null, 'the request after the aborted one is served');
    assert.equal(player().attempts('quick'), sent + 1, 'the timed-out waiting request was never sent');
  } finally {
    await client.close();
  }
});

test('closing the client fails requests still waiting for a connection', async () => {
  const client = createHttpClient({ url: player().origin, connections: 1 });
  const inFlight = client.send(hanging(10_000));
  const waiting = client.send(hanging(10_000, undefined, 'quick'));
  await new Promise((resolve) => setTimeout(resolve, 50));
  await client.close();
  const [a, b] = await Promise.all([inFlight, waiting]);
  assert.notEqual(a.error, null);
  assert.equal(b.error?.kind, 'connection_error');
});
