/**
 * Messages between the worker-pool client (main thread) and its workers, plus the two pure pieces
 * both sides share: session → worker affinity and the clock conversion.
 *
 * Clock: each worker thread has its own `performance.timeOrigin` (epoch ms, µs precision), so its
 * `performance.now()` counts from a different zero. A worker stamps with
 * `performance.now()·1e6 + (workerOrigin − mainOrigin)·1e6`, which puts every record it returns on
 * the main thread's monotonic ns scale (the run's TimeBase) without any per-record conversion.
 */

import type { EndpointOptions } from '../endpoint/types.js';
import type { RequestIdentity } from '../record/types.js';
import type { PrewarmResult } from './connector.js';
import type { PackedRecords } from './record-wire.js';

/** The identity a worker gives its requests: never read (the main thread rebuilds the real one). */
export const WORKER_IDENTITY: RequestIdentity = {
  conversationId: '',
  turnIndex: 0,
  sessionNum: 0,
  xRequestId: '',
  xCorrelationId: '',
  model: '',
  scheduledNs: null,
  inputTokens: null,
  requestedOutputTokens: null,
};

/** Worker start-up data (`workerData`). */
export interface WorkerInit {
  /** Server origins, in `--url` order (a request's `server` indexes this list). */
  urls: readonly string[];
  /** Connections of each of this worker's own undici Pools (one per server). */
  connections: number;
  /** The main thread's `performance.timeOrigin`, epoch ms. */
  mainTimeOriginMs: number;
  connectTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
}

/**
 * One request, as sent to a worker: a {@link SendRequest} without its identity (the main thread
 * keeps it and fills the record's identity fields itself, record-wire.ts), adapter and signal.
 */
export interface WireRequest {
  id: number;
  path: string;
  /** `SendRequest.server`: index into `WorkerInit.urls`. */
  server: number;
  headers: Record<string, string>;
  body: string | Uint8Array;
  stream: boolean;
  /** `EndpointAdapter.name`; the worker gets the adapter from `adapterFor` (endpoint/registry.ts). */
  adapterName: string;
  /**
   * `EndpointAdapter.options` of a configured adapter (the `template` type's), which the worker
   * builds its adapter from; absent for the others.
   */
  adapterOptions?: EndpointOptions;
  timeoutMs: number;
}

/** Main → worker. Sends are batched per event-loop turn. */
export type ToWorker =
  | { type: 'send'; requests: WireRequest[] }
  | { type: 'cancel'; id: number; reason: string | null }
  | { type: 'prewarm'; count: number }
  | { type: 'reserve'; count: number; dueNs: number }
  | { type: 'floor'; probe: FloorProbe }
  | { type: 'close' };

/**
 * The client-floor probe a worker runs on its own thread (health/client-floor.ts): it sleeps to
 * `count` targets `spacingNs` apart on a clock of the run's precision and samples its event-loop
 * delay meanwhile.
 */
export interface FloorProbe {
  count: number;
  spacingNs: number;
  precision: 'timer' | 'spin';
  /** Event-loop delay histogram resolution, ms. */
  loopResolutionMs: number;
}

/** What a worker's floor probe measured. */
export interface ThreadFloor {
  /** Lateness of each wake-up (wake-up − target), ms, in target order. */
  lateMs: Float64Array;
  /** The thread's event-loop delay over the probe, ns; count 0 when it took no sample. */
  loopDelayNs: { count: number; max: number; p50: number; p99: number };
}

/** Thread CPU and event-loop figures a worker reports about itself. */
export interface WorkerSelfStats {
  /** CPU seconds (user + system) this thread has used, from /proc/thread-self; null off Linux. */
  cpuSeconds: number | null;
}

/**
 * Worker → main. Records are batched per event-loop turn and packed in column form
 * (record-wire.ts); `ids[i]` is the request id of the i-th record.
 */
export type FromWorker =
  | { type: 'records'; ids: number[]; packed: PackedRecords }
  | { type: 'ready'; stats: WorkerSelfStats }
  | { type: 'stats'; stats: WorkerSelfStats }
  | { type: 'prewarmed'; result: PrewarmResult }
  | { type: 'floor'; floor: ThreadFloor }
  | { type: 'closed' };

/**
 * Worker index of a conversation: FNV-1a (32-bit) of its id modulo `workers`, so every turn of a
 * session goes through the same worker (and so the same connection pool), like AIPerf's
 * session-sticky worker routing.
 */
export function workerIndexFor(conversationId: string, workers: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < conversationId.length; i++) {
    hash ^= conversationId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % workers;
}

/**
 * ns to add to this thread's `performance.now()·1e6` to land on the main thread's scale:
 * `(thisOrigin − mainOrigin)·1e6`. Zero on the main thread itself.
 */
export function originOffsetNs(mainTimeOriginMs: number, ownTimeOriginMs = performance.timeOrigin): number {
  return (ownTimeOriginMs - mainTimeOriginMs) * 1e6;
}

/** CPU seconds of the calling thread (user + system, 10 ms ticks), or null where unavailable. */
export function threadCpuSeconds(read: (path: string) => string): number | null {
  try {
    const stat = read('/proc/thread-self/stat');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? ticks / 100 : null;
  } catch {
    return null;
  }
}
