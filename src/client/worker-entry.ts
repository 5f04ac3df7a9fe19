/**
 * Entry point of one worker thread of the worker-pool client. It owns an ordinary single-process
 * client per server (its own undici Pools, client/multi-server.ts), stamps on the main thread's clock (see worker-protocol.ts), and
 * posts finished records back in batches: one `postMessage` per event-loop turn, flushed from
 * `setImmediate` so every request that completed during that turn's I/O phase travels together,
 * packed in column form (record-wire.ts). Requests are sent keyed by their id, so a `cancel`
 * message needs no AbortController per request.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parentPort, workerData } from 'node:worker_threads';
import { adapterFor, ENDPOINTS, isEndpointTypeName } from '../endpoint/registry.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import type { RawRecord } from '../record/types.js';
import { RealClock } from '../timing/real-clock.js';
import { wakeLateness } from '../timing/wake-floor.js';
import { createMultiServerClient } from './multi-server.js';
import { packRecords } from './record-wire.js';
import { createHttpClient, type PooledHttpClient } from './undici-client.js';
import {
  type FloorProbe,
  type FromWorker,
  originOffsetNs,
  type ThreadFloor,
  type ToWorker,
  threadCpuSeconds,
  type WireRequest,
  WORKER_IDENTITY,
  type WorkerInit,
} from './worker-protocol.js';

const STATS_INTERVAL_MS = 1000;

function start(port: NonNullable<typeof parentPort>, init: WorkerInit): void {
  const offsetNs = originOffsetNs(init.mainTimeOriginMs);
  const client = createMultiServerClient(
    init.urls.map((url) =>
      createHttpClient({
        url,
        connections: init.connections,
        nowNs: () => performance.now() * 1e6 + offsetNs,
        ...(init.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: init.connectTimeoutMs }),
        ...(init.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs: init.keepAliveTimeoutMs }),
      }),
    ),
  );
  let ids: number[] = [];
  let records: RawRecord[] = [];
  const flush = (): void => {
    const message: FromWorker = { type: 'records', ids, packed: packRecords(records) };
    ids = [];
    records = [];
    port.postMessage(message);
  };
  const done = (raw: RawRecord, id: number): void => {
    if (ids.length === 0) setImmediate(flush);
    ids.push(id);
    records.push(raw);
  };
  const postStats = (): void =>
    port.postMessage({
      type: 'stats',
      stats: { cpuSeconds: threadCpuSeconds((p) => readFileSync(p, 'utf8')) },
    } satisfies FromWorker);
  port.postMessage({
    type: 'ready',
    stats: { cpuSeconds: threadCpuSeconds((p) => readFileSync(p, 'utf8')) },
  } satisfies FromWorker);
  const statsTimer = setInterval(postStats, STATS_INTERVAL_MS);
  statsTimer.unref();
  port.on('message', (message: ToWorker) => {
    if (message.type === 'send') for (const wire of message.requests) send(client, wire, done);
    else if (message.type === 'cancel') client.cancel(message.id, cancelReason(message.reason));
    else if (message.type === 'prewarm')
      void client
        .prewarm(message.count)
        .then((result) => port.postMessage({ type: 'prewarmed', result } satisfies FromWorker));
    else if (message.type === 'reserve') client.reserveConnections?.(message.count, message.dueNs);
    else if (message.type === 'floor')
      void probeFloor(message.probe).then((floor) =>
        port.postMessage({ type: 'floor', floor } satisfies FromWorker),
      );
    else void close(port, client, statsTimer, postStats);
  });
}

/**
 * The client-floor probe on this thread (worker-protocol.ts {@link FloorProbe}): wake-up lateness
 * on a clock of the run's precision, and this thread's event-loop delay over the same window.
 */
async function probeFloor(probe: FloorProbe): Promise<ThreadFloor> {
  const loop = monitorEventLoopDelay({ resolution: probe.loopResolutionMs });
  loop.enable();
  const lateMs = await wakeLateness(new RealClock({ precision: probe.precision }), probe);
  loop.disable();
  const loopDelayNs =
    loop.count === 0
      ? { count: 0, max: 0, p50: 0, p99: 0 }
      : { count: loop.count, max: loop.max, p50: loop.percentile(50), p99: loop.percentile(99) };
  return { lateMs: Float64Array.from(lateMs), loopDelayNs };
}

function send(client: PooledHttpClient, wire: WireRequest, done: (raw: RawRecord, id: number) => void): void {
  const name = wire.adapterName;
  if (!isEndpointTypeName(name)) throw new Error(`worker: unknown endpoint adapter ${name}`);
  const request = {
    identity: WORKER_IDENTITY,
    path: wire.path,
    server: wire.server,
    headers: wire.headers,
    body: wire.body,
    stream: wire.stream,
    adapter: wire.adapterOptions === undefined ? ENDPOINTS[name] : configuredAdapter(name, wire),
    timeoutMs: wire.timeoutMs,
  };
  client.sendKeyed(request, wire.id, done);
}

/** The configured adapters this worker built, by adapter name and options (one per run in practice). */
const configured = new Map<string, EndpointAdapter>();

/** The adapter of `name` configured with the request's options, built once per distinct options. */
function configuredAdapter(name: Parameters<typeof adapterFor>[0], wire: WireRequest): EndpointAdapter {
  const options = wire.adapterOptions as NonNullable<WireRequest['adapterOptions']>;
  const key = `${name}\n${JSON.stringify(options)}`;
  let adapter = configured.get(key);
  if (adapter === undefined) {
    adapter = adapterFor(name, options);
    configured.set(key, adapter);
  }
  return adapter;
}

function cancelReason(reason: string | null): Error | undefined {
  return reason === null ? undefined : new Error(reason);
}

async function close(
  port: NonNullable<typeof parentPort>,
  client: PooledHttpClient,
  statsTimer: NodeJS.Timeout,
  postStats: () => void,
): Promise<void> {
  clearInterval(statsTimer);
  postStats();
  await client.close();
  port.postMessage({ type: 'closed' } satisfies FromWorker);
  port.close();
}

if (parentPort !== null) start(parentPort, workerData as WorkerInit);
