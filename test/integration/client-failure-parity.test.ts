/**
 * A run sends through one of two clients (`createClient`: the single-process client for
 * `--workers 1`, the worker pool above). Both must record the same failure identically: for every
 * failure a server or the network can cause, and for our own timeout and cancellations, the failed
 * record is the same through both (identity, status, partial output, usage, error kind, code, type
 * and message), timestamps aside; and its code is the one the error-code table of docs/artifacts.md gives its kind.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { SendRequest } from '../../src/client/types.js';
import { createClient, type PhaseClient } from '../../src/client/worker-factory.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { ErrorKind, RawRecord, RequestIdentity } from '../../src/record/types.js';
import {
  chatChunk,
  type FixturePlayer,
  inlineFixture,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import { assertResetRead } from '../helpers/reset-read.js';

const SSE = { 'content-type': 'text/event-stream' };
/** How long p-reset's server waits after its chunk before it resets the connection. */
const RESET_GAP_MS = 100;
const fixtures = [
  inlineFixture('p-429', { status: 429, headers: { 'retry-after': '3' }, body: 'slow down' }),
  inlineFixture('p-500-empty', { status: 500, headers: {}, body: '' }),
  inlineFixture('p-event-error-with-code', {
    status: 200,
    headers: SSE,
    writes: [
      { atMs: 0, data: chatChunk('Hi') },
      {
        atMs: 5,
        data: 'event: error\ndata: {"error":{"message":"overloaded","code":503,"type":"Busy"}}\n\n',
      },
    ],
    end: 'close',
  }),
  inlineFixture('p-error-key', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: 'data: {"error":{"message":"bad things"}}\n\ndata: [DONE]\n\n' }],
    end: 'close',
  }),
  inlineFixture('p-clean-eof', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'close',
  }),
  inlineFixture('p-truncated', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'truncate',
    endAtMs: 10,
  }),
  inlineFixture('p-reset', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'destroy',
    endAtMs: RESET_GAP_MS,
  }),
  inlineFixture('p-done-only', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: 'data: [DONE]\n\n' }],
    end: 'close',
  }),
  inlineFixture('p-hang', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'hang',
  }),
];

const IDENTITY: RequestIdentity = {
  conversationId: 'parity',
  turnIndex: 2,
  sessionNum: 7,
  xRequestId: 'req-parity',
  xCorrelationId: 'corr-parity',
  model: 'test-model',
  requestType: 'text',
  scheduledNs: 12_345,
  inputTokens: 11,
  requestedOutputTokens: 13,
};

let player: FixturePlayer;
let single: PhaseClient;
let pool: PhaseClient;

before(async () => {
  player = await startFixturePlayer(fixtures);
  single = createClient({ urls: [player.origin], connections: 2, workers: 1 });
  pool = createClient({ urls: [player.origin], connections: 2, workers: 2 });
  await pool.ready?.();
});
after(async () => {
  await single.close();
  await pool.close();
  await player.close();
});

function request(fixture: string, over: Partial<SendRequest> = {}): SendRequest {
  return {
    identity: IDENTITY,
    path: '/v1/chat/completions',
    headers: { 'x-fixture': fixture },
    body: JSON.stringify({ model: 'test-model', messages: [{ role: 'user', content: 'x' }], stream: true }),
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs: 5000,
    ...over,
  };
}

/** The record with each timestamp replaced by whether it was taken. */
function withoutTimes(raw: RawRecord): unknown {
  const taken = (ns: number | null) => ns !== null;
  return {
    ...raw,
    startNs: taken(raw.startNs),
    sentNs: taken(raw.sentNs),
    connectDurationNs: taken(raw.connectDurationNs),
    ackNs: taken(raw.ackNs),
    streamEndNs: taken(raw.streamEndNs),
    endNs: taken(raw.endNs),
    chunks: raw.chunks.map((chunk) => ({ ...chunk, atNs: taken(chunk.atNs) })),
    error: raw.error === null ? null : { ...raw.error, failedAtNs: taken(raw.error.failedAtNs) },
  };
}

/** Sends `make()` through both clients; checks the two records agree, and returns one. */
async function sameThroughBoth(make: () => SendRequest, kind: ErrorKind): Promise<RawRecord> {
  const viaSingle = await single.send(make());
  const viaPool = await pool.send(make());
  assert.deepStrictEqual(withoutTimes(viaPool), withoutTimes(viaSingle));
  for (const raw of [viaSingle, viaPool]) {
    assert.equal(raw.error?.kind, kind);
    const failedAt = raw.error?.failedAtNs ?? Number.NaN;
    assert.ok(raw.startNs <= failedAt && failedAt <= raw.endNs, 'failed between start and end');
  }
  return viaSingle;
}

/** Fixture, the kind it fails with, and the `error.code` the record must carry (the table of docs/artifacts.md). */
const serverFailures: [string, ErrorKind, number][] = [
  ['p-429', 'http_status', 429],
  ['p-500-empty', 'http_status', 500],
  ['p-error-key', 'in_band_error', 502],
  ['p-clean-eof', 'stream_incomplete', 502],
  ['p-truncated', 'stream_incomplete', 502],
  ['p-done-only', 'no_content', 502],
];

for (const [fixture, kind, code] of serverFailures) {
  test(`${fixture}: the same ${kind} record through both clients, code ${code}`, async () => {
    const raw = await sameThroughBoth(() => request(fixture), kind);
    assert.equal(raw.error?.code, code);
  });
}

test('p-reset: a reset after a chunk, through both clients: each reads it as test/helpers/reset-read.ts allows, and the records agree up to it', async () => {
  const viaSingle = await single.send(request('p-reset'));
  const viaPool = await pool.send(request('p-reset'));
  assertResetRead(viaSingle, RESET_GAP_MS, 'single');
  assertResetRead(viaPool, RESET_GAP_MS, 'pool');
  const n = Math.min(viaSingle.chunks.length, viaPool.chunks.length);
  const texts = (raw: RawRecord) => raw.chunks.slice(0, n).map((c) => c.text);
  assert.deepEqual(texts(viaPool), texts(viaSingle));
  const rest = (raw: RawRecord) => withoutTimes({ ...raw, chunks: [], error: null });
  assert.deepStrictEqual(rest(viaPool), rest(viaSingle));
});

test('an in-band error keeps the 400–599 code of its payload, through both clients', async () => {
  const raw = await sameThroughBoth(() => request('p-event-error-with-code'), 'in_band_error');
  assert.equal(raw.error?.code, 503);
  assert.equal(raw.error?.type, 'Busy');
  assert.equal(raw.chunks.length, 1, 'partial output is kept');
});

test('our own timeout: the same timeout record through both clients', async () => {
  const raw = await sameThroughBoth(() => request('p-hang', { timeoutMs: 150 }), 'timeout');
  assert.equal(raw.error?.code, 408);
});

test('a cancellation mid-stream and a pre-aborted one: the same record through both clients', async () => {
  const midStream = await sameThroughBoth(() => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop now')), 100);
    return request('p-hang', { signal: controller.signal });
  }, 'cancelled');
  assert.equal(midStream.error?.code, 499);
  assert.equal(midStream.cancelled, true);
  const attempts = player.attempts('p-hang');
  const early = await sameThroughBoth(() => request('p-hang', { signal: AbortSignal.abort() }), 'cancelled');
  assert.equal(early.error?.code, 499);
  assert.equal(player.attempts('p-hang'), attempts, 'a pre-aborted request is never sent');
});

test('a refused connection: the same connection_error record through both clients', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadSingle = createClient({ urls: [url], connections: 1, workers: 1 });
  const deadPool = createClient({ urls: [url], connections: 1, workers: 2 });
  try {
    const viaSingle = await deadSingle.send(request('none'));
    const viaPool = await deadPool.send(request('none'));
    assert.deepStrictEqual(withoutTimes(viaPool), withoutTimes(viaSingle));
    assert.equal(viaSingle.error?.kind, 'connection_error');
    assert.equal(viaSingle.error?.code, 503);
  } finally {
    await deadSingle.close();
    await deadPool.close();
  }
});
