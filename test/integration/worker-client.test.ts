/**
 * The worker-pool client behaves like the single-process client: every SSE fixture (plus inline
 * error, timeout and cancellation cases) is sent through both, and the records must agree on
 * everything but timing; timestamps must be ordered and on the main thread's clock.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Worker } from 'node:worker_threads';
import type { HttpClient, SendRequest } from '../../src/client/types.js';
import { createHttpClient } from '../../src/client/undici-client.js';
import { createWorkerPoolClient, type WorkerPoolClient } from '../../src/client/worker-pool.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import type { RawRecord } from '../../src/record/types.js';
import {
  chatChunk,
  type Fixture,
  type FixturePlayer,
  inlineFixture,
  loadFixtures,
  startFixturePlayer,
} from '../helpers/fixture-player.js';
import { assertResetRead } from '../helpers/reset-read.js';
import { oneOffIdentity } from '../helpers/send-once.js';

const SSE = { 'content-type': 'text/event-stream' };
const inline = [
  inlineFixture('w-event-error', {
    status: 200,
    headers: SSE,
    writes: [
      { atMs: 0, data: chatChunk('Hi') },
      { atMs: 5, data: 'event: error\ndata: {"message":"engine died"}\n\n' },
    ],
    end: 'close',
  }),
  inlineFixture('w-hang', {
    status: 200,
    headers: SSE,
    writes: [{ atMs: 0, data: chatChunk('Hi') }],
    end: 'hang',
  }),
  inlineFixture('w-429', { status: 429, headers: { 'retry-after': '2' }, body: 'slow down' }),
];
const fixtures = loadFixtures();
let player: FixturePlayer;
let single: HttpClient;
let pool: WorkerPoolClient;

before(async () => {
  player = await startFixturePlayer([...fixtures, ...inline]);
  single = createHttpClient({ url: player.origin, connections: 4 });
  pool = createWorkerPoolClient({ urls: [player.origin], connections: 4, workers: 2 });
});
after(async () => {
  await single.close();
  await pool.close();
  await player.close();
});

function requestFor(fixture: Fixture, over: Partial<SendRequest> = {}): SendRequest {
  const adapter = ENDPOINTS[fixture.request.endpoint];
  const body = adapter.buildBody({
    model: fixture.model,
    messages: [{ role: 'user', content: `fixture ${fixture.name}` }],
    stream: fixture.request.stream,
    ...(fixture.request.maxTokens === undefined ? {} : { maxTokens: fixture.request.maxTokens }),
    useLegacyMaxTokens: false,
    perChunkUsage: fixture.request.streamOptions?.continuous_usage_stats === true,
    extraInputs: {},
  });
  return {
    identity: { ...oneOffIdentity(fixture.model), conversationId: fixture.name },
    path: adapter.defaultPath,
    headers: { 'x-fixture': fixture.name },
    body: JSON.stringify(body),
    stream: fixture.request.stream,
    adapter,
    timeoutMs: 5000,
    ...over,
  };
}

/** Everything but timestamps. */
function shape(raw: RawRecord) {
  return {
    httpStatus: raw.httpStatus,
    error: raw.error === null ? null : { ...raw.error, failedAtNs: 0 },
    cancelled: raw.cancelled,
    chunks: raw.chunks.map((c) => ({ ...c, atNs: 0 })),
    streamEnded: raw.streamEndNs !== null,
    usage: raw.usage,
    finishReason: raw.finishReason,
    parseErrors: raw.parseErrors,
    conversationId: raw.conversationId,
  };
}

/** Stamping order, and every stamp inside [before, after] of the main thread's clock. */
function checkClock(raw: RawRecord, beforeNs: number, afterNs: number): void {
  const stamps = [raw.startNs, raw.ackNs, ...raw.chunks.map((c) => c.atNs), raw.endNs].filter(
    (v): v is number => v !== null,
  );
  for (let i = 1; i < stamps.length; i++)
    assert.ok((stamps[i] as number) >= (stamps[i - 1] as number), `stamp ${i} out of order`);
  assert.ok(raw.startNs >= beforeNs, 'start stamped before send() was called (clock offset wrong)');
  assert.ok(raw.endNs <= afterNs, 'end stamped after the record arrived (clock offset wrong)');
  if (raw.streamEndNs !== null) assert.ok(raw.streamEndNs <= raw.endNs);
}

async function viaPool(request: SendRequest): Promise<RawRecord> {
  const beforeNs = performance.now() * 1e6;
  const raw = await pool.send(request);
  checkClock(raw, beforeNs, performance.now() * 1e6);
  return raw;
}

const comparable = fixtures.filter((f) => f.name !== 'b23-headers-then-hang');

test('every SSE fixture gives the same record through the worker pool as through the single client', async () => {
  for (const fixture of comparable) {
    // Both at once: the fixtures play their recorded timing (seconds for some), and the two clients
    // and their connections are independent.
    const [expected, actual] = await Promise.all([
      single.send(requestFor(fixture)),
      viaPool(requestFor(fixture)),
    ]);
    if (fixture.response.end === 'destroy') assertSameUpToReset(actual, expected, fixture);
    else assert.deepEqual(shape(actual), shape(expected), fixture.name);
  }
});

/**
 * A fixture that ends in a TCP reset: each client reports what it could read of it
 * (test/helpers/reset-read.ts), and a client that read late may have kept fewer chunks, or none: the
 * shorter chunk list is a prefix of the longer, and everything but the chunks and the error is equal.
 */
function assertSameUpToReset(actual: RawRecord, expected: RawRecord, fixture: Fixture): void {
  const writes = fixture.response.writes ?? [];
  const gapMs = (fixture.response.endAtMs ?? 0) - (writes[writes.length - 1]?.atMs ?? 0);
  assertResetRead(actual, gapMs, `${fixture.name} (pool)`);
  assertResetRead(expected, gapMs, `${fixture.name} (single)`);
  const a = shape(actual);
  const e = shape(expected);
  const n = Math.min(a.chunks.length, e.chunks.length);
  assert.deepEqual(a.chunks.slice(0, n), e.chunks.slice(0, n), fixture.name);
  assert.deepEqual({ ...a, chunks: [], error: null }, { ...e, chunks: [], error: null }, fixture.name);
}

test('records from the pool carry the identity of their own request (concurrent sends, both workers)', async () => {
  const base = fixtures[0] as Fixture;
  const requests = Array.from({ length: 12 }, (_, i) => ({
    ...requestFor(base),
    identity: {
      conversationId: `id${i}`,
      turnIndex: i % 3,
      sessionNum: i,
      xRequestId: `req-${i}`,
      xCorrelationId: `corr-${i}`,
      model: `model-${i % 2}`,
      scheduledNs: i % 2 === 0 ? null : i * 1000,
      inputTokens: i % 4 === 0 ? null : i * 10,
      requestedOutputTokens: i,
      ...(i % 3 === 0 ? { requestType: `type-${i}` } : {}),
    },
  }));
  const records = await Promise.all(requests.map((request) => pool.send(request)));
  records.forEach((raw, i) => {
    const { identity } = requests[i] as SendRequest;
    const { requestType, ...fields } = identity;
    for (const [key, value] of Object.entries(fields)) assert.equal(raw[key as keyof RawRecord], value, key);
    assert.equal(raw.requestType, requestType);
    assert.equal('requestType' in raw, requestType !== undefined);
  });
});

test('in-band error and HTTP status errors match the single client', async () => {
  for (const fixture of inline.filter((f) => f.name !== 'w-hang')) {
    const expected = await single.send(requestFor(fixture));
    const actual = await viaPool(requestFor(fixture));
    assert.deepEqual(shape(actual), shape(expected), fixture.name);
  }
  const limited = await viaPool(requestFor(inline[2] as Fixture));
  assert.equal(limited.error?.kind, 'http_status');
  assert.equal(limited.error?.retryAfter, '2');
});

test('timeout in a worker keeps partial output and is a 408', async () => {
  const raw = await viaPool(requestFor(inline[1] as Fixture, { timeoutMs: 200 }));
  assert.equal(raw.error?.kind, 'timeout');
  assert.equal(raw.error?.code, 408);
  assert.equal(raw.chunks.length, 1);
  assert.ok((raw.error?.failedAtNs ?? 0) - raw.startNs >= 200e6);
});

test('cancellation crosses to the worker; a pre-aborted request is never sent', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(new Error('stop now')), 100);
  const raw = await viaPool(requestFor(inline[1] as Fixture, { signal: controller.signal }));
  assert.equal(raw.error?.kind, 'cancelled');
  assert.equal(raw.error?.code, 499);
  assert.match(raw.error?.message ?? '', /stop now/);
  assert.equal(raw.cancelled, true);
  assert.equal(raw.chunks.length, 1, 'partial output is kept');
  const attempts = player.attempts('w-hang');
  const pre = new AbortController();
  pre.abort();
  const early = await pool.send(requestFor(inline[1] as Fixture, { signal: pre.signal }));
  assert.equal(early.error?.kind, 'cancelled');
  assert.equal(player.attempts('w-hang'), attempts, 'a pre-aborted request is never sent');
});

test('a session always goes to the same worker; both workers report stats', async () => {
  const base = fixtures[0] as Fixture;
  const sends = Array.from({ length: 16 }, (_, i) =>
    pool.send({ ...requestFor(base), identity: { ...oneOffIdentity('m'), conversationId: `s${i}` } }),
  );
  await Promise.all(sends);
  const stats = pool.threadStats();
  assert.equal(stats.length, 2);
  for (const s of stats) assert.ok(s.eventLoopUtilization >= 0 && s.eventLoopUtilization <= 1);
});

test('a worker that dies fails its in-flight requests as client_error, then the pool recovers', async () => {
  const started: Worker[] = [];
  const crashPool = createWorkerPoolClient({
    urls: [player.origin],
    connections: 2,
    workers: 1,
    onWorkerStart: (worker) => started.push(worker),
  });
  try {
    const seen = player.attempts('w-hang');
    const hung = crashPool.send(requestFor(inline[1] as Fixture, { timeoutMs: 10_000 }));
    for (let i = 0; i < 500 && player.attempts('w-hang') === seen; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(player.attempts('w-hang'), seen + 1, 'the worker sent the request');
    await started[0]?.terminate();
    const raw = await hung;
    assert.equal(raw.error?.kind, 'client_error');
    assert.match(raw.error?.message ?? '', /worker thread exited/);
    const again = await crashPool.send(requestFor(fixtures[0] as Fixture));
    assert.notEqual(again.error?.kind, 'client_error');
    assert.equal(started.length, 2, 'a fresh worker took over');
  } finally {
    await crashPool.close();
  }
});
