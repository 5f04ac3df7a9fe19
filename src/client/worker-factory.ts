/**
 * Chooses the phase's client: the single-process undici client for `workers ≤ 1` (the default;
 * cheapest for small runs, no thread start-up or message hops), else the worker-pool client; either
 * holds one connection pool per server (`--url` given more than once: client/multi-server.ts).
 */
import type { PrewarmResult } from './connector.js';
import { createMultiServerClient } from './multi-server.js';
import type { HttpClient } from './types.js';
import { createHttpClient } from './undici-client.js';
import { createWorkerPoolClient, type WorkerThreadStats } from './worker-pool.js';
import type { FloorProbe, ThreadFloor } from './worker-protocol.js';

/** Options of {@link createClient}. */
export interface ClientChoice {
  /** Server URLs (origin plus any base path, which is ignored here), in `--url` order. */
  urls: readonly string[];
  /** Total connections per server (split across workers when there are several). */
  connections: number;
  /** `--workers`: worker threads; undefined, 0 or 1 = single-process. */
  workers?: number;
}

/** A phase client; `threadStats` is present only for the worker pool. */
export interface PhaseClient extends HttpClient {
  threadStats?(): WorkerThreadStats[];
  /** Starts worker threads; await it before a timed schedule so the first sends are not late. */
  ready?(): Promise<void>;
  /** Opens `count` connections to the target before the first request (connector.ts); never throws. */
  prewarm?(count: number): Promise<PrewarmResult>;
  /** The worker pool: runs the client-floor probe on each worker thread (where the sends run). */
  probeFloor?(probe: FloorProbe): Promise<ThreadFloor[]>;
}

/**
 * Default `--workers`: 1 (single-process). On the 2-core reference machine the worker pool's extra
 * message hop and thread start-up did not pay off for runs the single loop can carry (bench/README.md);
 * pass `--workers N` for thousands of concurrent streams on a machine with cores to spare.
 */
export const DEFAULT_WORKERS = 1;

/**
 * Creates the client for one phase.
 * @throws {TypeError} if a URL of `urls` is not a valid absolute URL.
 */
export function createClient(choice: ClientChoice): PhaseClient {
  const workers = choice.workers ?? DEFAULT_WORKERS;
  const { urls, connections } = choice;
  if (workers <= 1) return createMultiServerClient(urls.map((url) => createHttpClient({ url, connections })));
  return createWorkerPoolClient({ urls, connections, workers });
}
