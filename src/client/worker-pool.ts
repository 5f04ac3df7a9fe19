/**
 * The worker-pool client: an {@link HttpClient} that spreads requests over `worker_threads`, each
 * running the ordinary undici client with its own Pool, so SSE parsing, JSON decoding and socket
 * I/O leave the scheduler's event loop (above ~1000 streams on 2 cores one loop's timestamps lag by tens of
 * ms: bench/README.md, `--workers`).
 *
 * - Affinity: every turn of a conversation goes to the same worker (FNV-1a of its id).
 * - Transport: request bodies are strings (structured clone copies them with one memcpy); sends are
 *   batched into one `postMessage` per worker per microtask turn, records come back batched and
 *   packed in column form (record-wire.ts): chunks are not cloned object by object, and identities
 *   never cross (the main thread keeps each request and rebuilds its record's identity fields).
 * - Time: workers stamp on the main thread's monotonic ns scale (worker-protocol.ts).
 * - Cancellation: an aborted `signal` becomes a `cancel` message (one listener per signal, see
 *   abort-watch.ts); a pre-aborted request is never sent.
 * - Failure: if a worker dies, each request it held resolves as a `client_error` record, and the
 *   next request routed to that slot starts a fresh worker. `send()` never rejects or hangs.
 */
import type { EventLoopUtilization } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { isEndpointTypeName } from '../endpoint/registry.js';
import { failedRecord, finishRecord } from '../record/failure.js';
import { emptyRecord } from '../record/raw-record.js';
import type { RawRecord } from '../record/types.js';
import { monotonicNowNs } from '../timing/clock.js';
import { workerSource } from '../util/worker-source.js';
import { AbortWatch, type AbortWatcher } from './abort-watch.js';
import { type PrewarmResult, sumPrewarms } from './connector.js';
import { unpackRecords } from './record-wire.js';
import type { HttpClient, SendRequest } from './types.js';
import {
  type FloorProbe,
  type FromWorker,
  type ThreadFloor,
  type ToWorker,
  type WireRequest,
  WORKER_IDENTITY,
  type WorkerInit,
  workerIndexFor,
} from './worker-protocol.js';

/** Options of {@link createWorkerPoolClient}. */
export interface WorkerPoolOptions {
  /** Server origins, in `--url` order (`SendRequest.server` indexes it); every worker serves them all. */
  urls: readonly string[];
  /** Total connections per server, split evenly (rounded up) across workers. */
  connections: number;
  /** Worker threads, ≥ 1. */
  workers: number;
  connectTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  /** Called with each worker thread as it starts (tests use it to kill one). */
  onWorkerStart?: (worker: Worker) => void;
}

/** Per-thread figures of the pool, for self-monitoring. */
export interface WorkerThreadStats {
  /** Event-loop utilization since the worker started (0–1). */
  eventLoopUtilization: number;
  /** CPU seconds the thread has used, last reported; null when unknown. */
  cpuSeconds: number | null;
}

/** An {@link HttpClient} backed by worker threads, with per-thread stats. */
export interface WorkerPoolClient extends HttpClient {
  readonly workers: number;
  /** One entry per live worker slot; figures count from the moment each worker was ready. */
  threadStats(): WorkerThreadStats[];
  /** Resolves once every worker has started (or failed to); call before a timed schedule. */
  ready(): Promise<void>;
  /** Has the workers pre-open `count` connections between them (connector.ts); never throws. */
  prewarm(count: number): Promise<PrewarmResult>;
  /**
   * `count` built requests are due from `dueNs` (main-thread ns) on: each worker reserves its
   * share ({@link reserveShare}) for its own pools (connector.ts `reserve`). Never throws.
   */
  reserveConnections(count: number, dueNs?: number): void;
  /** Runs the client-floor probe on every worker at once (after they started); one result per live worker. */
  probeFloor(probe: FloorProbe): Promise<ThreadFloor[]>;
}

/**
 * The connections one of `workers` workers reserves for `count` built requests. Requests go to a
 * worker by their session (a hash), so a worker's share of a burst is binomial (n = `count`,
 * p = 1/`workers`), not an even split: its mean plus two standard deviations, rounded up, at most
 * `count`, so an uneven burst rarely waits for a connection. What is not used stays open, idle.
 */
export function reserveShare(count: number, workers: number): number {
  if (count <= 0) return 0;
  if (workers <= 1) return count;
  const p = 1 / workers;
  return Math.min(count, Math.ceil(count * p + 2 * Math.sqrt(count * p * (1 - p))));
}

/** A request handed to a worker and not yet answered; watches its signal to forward a cancel. */
class Pending implements AbortWatcher {
  prevWatcher: AbortWatcher | null = null;
  nextWatcher: AbortWatcher | null = null;
  watching: AbortSignal | null = null;

  constructor(
    readonly request: SendRequest,
    readonly startNs: number,
    readonly resolve: (raw: RawRecord) => void,
    private readonly slot: Slot,
    private readonly id: number,
  ) {}

  onSignalAbort(reason: unknown): void {
    this.slot.cancel(this.id, reason);
  }
}

/** A `client_error` record (type `WorkerError`) for a request the pool could not complete (crash, bad adapter). */
function poolFailureRecord(request: SendRequest, startNs: number, message: string): RawRecord {
  return failedRecord(startedRecord(request, startNs), 'WorkerError', message, monotonicNowNs());
}

/** A record of `request` started at `startNs`, nothing observed yet. */
function startedRecord(request: SendRequest, startNs: number): RawRecord {
  const raw = emptyRecord(request.identity);
  raw.startNs = startNs;
  return raw;
}

/** One worker slot: the thread, its in-flight requests and its send batch. */
class Slot {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private batch: WireRequest[] = [];
  private cpuSeconds: number | null = null;
  private cpuAtReady = 0;
  private eluAtReady: EventLoopUtilization | undefined;
  private started: Promise<void> | null = null;
  private markStarted: () => void = () => undefined;
  private closing: Promise<void> | null = null;
  private prewarmed: ((result: PrewarmResult) => void) | null = null;
  private floored: ((floor: ThreadFloor | null) => void) | null = null;

  constructor(
    private readonly init: WorkerInit,
    private readonly onStart: ((worker: Worker) => void) | undefined,
    /** The pool's signal watch (shared by all slots). */
    readonly watch: AbortWatch,
  ) {}

  send(id: number, wire: WireRequest, pending: Pending): void {
    const worker = this.worker ?? this.spawn();
    this.pending.set(id, pending);
    if (this.batch.length === 0) queueMicrotask(() => this.flush(worker));
    this.batch.push(wire);
  }

  cancel(id: number, reason: unknown): void {
    if (!this.pending.has(id)) return;
    const message = reason instanceof Error ? reason.message : null;
    this.post({ type: 'cancel', id, reason: message });
  }

  /** Has the worker pre-open `count` connections (after it started); one call at a time. */
  async prewarm(count: number): Promise<PrewarmResult> {
    await this.start();
    if (this.worker === null)
      return { requested: count, opened: 0, failed: count, error: 'worker not running', durationMs: 0 };
    const answer = new Promise<PrewarmResult>((resolve) => {
      this.prewarmed = resolve;
    });
    this.post({ type: 'prewarm', count });
    return answer;
  }

  /** Forwards a connection reservation (worker-protocol.ts `reserve`); nothing when the worker is not running. */
  reserve(count: number, dueNs: number): void {
    if (count > 0) this.post({ type: 'reserve', count, dueNs });
  }

  /** Runs the floor probe on the worker (after it started); null when it is not running or dies meanwhile. */
  async probeFloor(probe: FloorProbe): Promise<ThreadFloor | null> {
    await this.start();
    if (this.worker === null) return null;
    const answer = new Promise<ThreadFloor | null>((resolve) => {
      this.floored = resolve;
    });
    this.post({ type: 'floor', probe });
    return answer;
  }

  stats(): WorkerThreadStats {
    const elu = this.worker?.performance.eventLoopUtilization(this.eluAtReady).utilization ?? 0;
    const cpu = this.cpuSeconds === null ? null : this.cpuSeconds - this.cpuAtReady;
    return { eventLoopUtilization: elu, cpuSeconds: cpu };
  }

  /** Starts the worker if needed; resolves when it is ready, or has died trying. */
  start(): Promise<void> {
    if (this.worker === null) this.spawn();
    return this.started ?? Promise.resolve();
  }

  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private spawn(): Worker {
    // Under tsx, `--import tsx` in `execArgv` does not reach worker threads on Node 20: util/worker-source.ts.
    const entry = workerSource(import.meta.url, 'worker-entry');
    const worker = new Worker(entry.source, { workerData: this.init, eval: entry.eval });
    this.started = new Promise<void>((resolve) => {
      this.markStarted = resolve;
    });
    worker.on('message', (message: FromWorker) => this.onMessage(message));
    worker.on('error', (err) => this.fail(worker, `worker thread failed: ${err.message}`));
    worker.on('exit', (code) => this.fail(worker, `worker thread exited (code ${code})`));
    this.worker = worker;
    this.onStart?.(worker);
    return worker;
  }

  private flush(worker: Worker): void {
    const requests = this.batch;
    this.batch = [];
    if (worker !== this.worker) {
      for (const wire of requests) this.settleFailed(wire.id, 'worker thread exited before the send');
      return;
    }
    worker.postMessage({ type: 'send', requests } satisfies ToWorker);
  }

  private post(message: ToWorker): void {
    this.worker?.postMessage(message);
  }

  private onMessage(message: FromWorker): void {
    if (message.type === 'ready') {
      this.eluAtReady = this.worker?.performance.eventLoopUtilization();
      this.cpuAtReady = message.stats.cpuSeconds ?? 0;
      this.markStarted();
    }
    if (message.type === 'stats' || message.type === 'ready') this.cpuSeconds = message.stats.cpuSeconds;
    if (message.type === 'prewarmed') {
      this.prewarmed?.(message.result);
      this.prewarmed = null;
    }
    if (message.type === 'floor') {
      this.floored?.(message.floor);
      this.floored = null;
    }
    if (message.type !== 'records') return;
    const ids = message.ids;
    const answered: (Pending | undefined)[] = [];
    const shells: RawRecord[] = [];
    for (const id of ids) {
      const pending = this.pending.get(id);
      answered.push(pending);
      shells.push(emptyRecord(pending?.request.identity ?? WORKER_IDENTITY));
    }
    const records = unpackRecords(message.packed, shells);
    for (let i = 0; i < ids.length; i++) {
      const pending = answered[i];
      if (pending === undefined) continue;
      this.pending.delete(ids[i] as number);
      this.watch.remove(pending);
      pending.resolve(records[i] as RawRecord);
    }
  }

  /** The worker died: fail everything it held; the next send starts a new one. */
  private fail(worker: Worker, message: string): void {
    if (worker !== this.worker) return;
    this.worker = null;
    this.markStarted();
    this.floored?.(null);
    this.floored = null;
    for (const id of [...this.pending.keys()]) this.settleFailed(id, message);
  }

  private settleFailed(id: number, message: string): void {
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    this.watch.remove(pending);
    pending.resolve(poolFailureRecord(pending.request, pending.startNs, message));
  }

  private async shutdown(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    const timer = setTimeout(() => void worker.terminate(), 5000);
    worker.postMessage({ type: 'close' } satisfies ToWorker);
    await exited;
    clearTimeout(timer);
  }
}

/**
 * Creates the worker-pool client. Workers start on {@link WorkerPoolClient.ready} or on the first
 * request routed to them.
 * @throws {TypeError} if a URL of `urls` is not a valid absolute URL.
 */
export function createWorkerPoolClient(options: WorkerPoolOptions): WorkerPoolClient {
  const urls = options.urls.map((url) => new URL(url).origin);
  const workers = Math.max(1, Math.floor(options.workers));
  const init: WorkerInit = {
    urls,
    connections: Math.max(1, Math.ceil(options.connections / workers)),
    mainTimeOriginMs: performance.timeOrigin,
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeoutMs: options.keepAliveTimeoutMs }),
  };
  const watch = new AbortWatch();
  const slots = Array.from({ length: workers }, () => new Slot(init, options.onWorkerStart, watch));
  let nextId = 0;
  return {
    workers,
    send: (request) =>
      new Promise<RawRecord>((resolve) => {
        const startNs = monotonicNowNs();
        const id = nextId++;
        const slot = slots[workerIndexFor(request.identity.conversationId, workers)] as Slot;
        route(slot, id, request, startNs, resolve);
      }),
    threadStats: () => slots.map((slot) => slot.stats()),
    ready: async () => {
      await Promise.all(slots.map((slot) => slot.start()));
    },
    prewarm: async (count) => {
      const t0 = performance.now();
      const shares = slots.map((slot, i) => slot.prewarm(Math.floor((count + i) / workers)));
      return sumPrewarms(count, await Promise.all(shares), performance.now() - t0);
    },
    reserveConnections: (count, dueNs) => {
      const share = reserveShare(count, workers);
      const due = dueNs ?? monotonicNowNs();
      for (const slot of slots) slot.reserve(share, due);
    },
    probeFloor: async (probe) => {
      const floors = await Promise.all(slots.map((slot) => slot.probeFloor(probe)));
      return floors.filter((f) => f !== null);
    },
    close: async () => {
      await Promise.all(slots.map((slot) => slot.close()));
    },
  };
}

function route(
  slot: Slot,
  id: number,
  request: SendRequest,
  startNs: number,
  resolve: (raw: RawRecord) => void,
): void {
  if (request.signal?.aborted === true) {
    const stop = { kind: 'cancelled', reason: request.signal.reason } as const;
    resolve(finishRecord(startedRecord(request, startNs), { stop }, monotonicNowNs()));
    return;
  }
  if (!isEndpointTypeName(request.adapter.name)) {
    resolve(poolFailureRecord(request, startNs, `unknown endpoint adapter ${request.adapter.name}`));
    return;
  }
  const pending = new Pending(request, startNs, resolve, slot, id);
  if (request.signal !== undefined) slot.watch.add(request.signal, pending);
  const { path, headers, body, stream, timeoutMs } = request;
  const server = request.server ?? 0;
  const { name: adapterName, options: adapterOptions } = request.adapter;
  const wire: WireRequest = { id, path, server, headers, body, stream, adapterName, timeoutMs };
  if (adapterOptions !== undefined) wire.adapterOptions = adapterOptions;
  slot.send(id, wire, pending);
}
