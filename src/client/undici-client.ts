/**
 * The measuring HTTP client: an undici `Pool` (keep-alive, pipelining 1) driven through the raw
 * dispatch-handler API, so each body read is timestamped in the data callback itself, once, before
 * any decoding (typescript-stack.md §2: undici pool + on-data stamping is the cheapest, lowest-lag
 * variant). undici's own 300 s header/body timeouts are disabled: a long prefill must never be cut
 * short by a library default. Instead one timer per request enforces `timeoutMs`, measured from the
 * send stamp; when it fires the request is aborted, which makes undici destroy the socket.
 *
 * Requests are never retried and `send()` never rejects: every outcome is a {@link RawRecord}.
 */

import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import type { RawRecord } from '../record/types.js';
import { monotonicNowNs } from '../timing/clock.js';
import { packageVersion } from '../util/package-root.js';
import { recordError } from './failures.js';
import { RecordBuilder, type StopReason } from './record-builder.js';
import type { HttpClient, SendRequest } from './types.js';

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** Server origin, e.g. `http://127.0.0.1:8000`; any path in it is ignored (requests carry theirs). */
  url: string;
  /** Maximum concurrent connections (one in-flight request each). */
  connections: number;
  /** TCP connect timeout in ms; default 10 000. The request timeout still bounds the whole request. */
  connectTimeoutMs?: number;
  /** Idle keep-alive socket lifetime in ms; default undici's 4 000. */
  keepAliveTimeoutMs?: number;
  /** Monotonic ns clock; default `performance.now()` based. Injectable for tests. */
  nowNs?: () => number;
}

/** Request headers: caller headers (lower-cased), then ours; content-type always ours (AIPerf §8). */
export function requestHeaders(request: SendRequest, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {
    accept: request.stream ? 'text/event-stream' : 'application/json',
    'user-agent': userAgent,
  };
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  headers['content-type'] = 'application/json';
  return headers;
}

/**
 * Creates a pooled client bound to one origin.
 * @throws {TypeError} if `url` is not a valid absolute URL.
 */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  const origin = new URL(options.url).origin;
  const pool = new Pool(origin, {
    connections: options.connections,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
  });
  const nowNs = options.nowNs ?? monotonicNowNs;
  const userAgent = `tokenload/${packageVersion()}`;
  return {
    send: (request) => sendOne(pool, request, userAgent, nowNs),
    close: async () => {
      await pool.destroy();
    },
  };
}

function sendOne(
  pool: Pool,
  request: SendRequest,
  userAgent: string,
  nowNs: () => number,
): Promise<RawRecord> {
  const builder = new RecordBuilder(request);
  const headers = requestHeaders(request, userAgent);
  return new Promise<RawRecord>((resolve) => {
    const exchange = new Exchange(builder, request, nowNs, resolve);
    builder.raw.startNs = nowNs();
    if (request.signal?.aborted === true) {
      exchange.stop({ kind: 'cancelled', reason: request.signal.reason });
      return;
    }
    exchange.arm(builder.raw.startNs);
    try {
      pool.dispatch({ path: request.path, method: 'POST', headers, body: request.body }, exchange);
    } catch (err) {
      const at = nowNs();
      const message = err instanceof Error ? err.message : String(err);
      exchange.settle(() => {
        builder.raw.error = recordError('client_error', 0, 'DispatchError', message, at);
        builder.raw.endNs = at;
        return builder.raw;
      });
    }
  });
}

/** One request's dispatch handler plus its timer and cancellation wiring. */
class Exchange implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private timer: NodeJS.Timeout | null = null;
  private settled = false;
  private readonly onAbort = () => this.stop({ kind: 'cancelled', reason: this.request.signal?.reason });

  constructor(
    private readonly builder: RecordBuilder,
    private readonly request: SendRequest,
    private readonly nowNs: () => number,
    private readonly resolve: (record: RawRecord) => void,
  ) {}

  /**
   * Starts the timeout timer (deadline = send stamp + `timeoutMs`) and listens for cancellation.
   * Node timers run on a coarser, cached clock and can fire up to ~1 ms before the monotonic
   * deadline, so the callback re-checks it and re-arms for the remainder.
   */
  arm(startNs: number): void {
    const deadlineNs = startNs + this.request.timeoutMs * 1e6;
    const onTimer = () => {
      const leftMs = (deadlineNs - this.nowNs()) / 1e6;
      if (leftMs > 0) this.timer = setTimeout(onTimer, Math.ceil(leftMs));
      else this.stop({ kind: 'timeout', timeoutMs: this.request.timeoutMs });
    };
    this.timer = setTimeout(onTimer, this.request.timeoutMs);
    this.request.signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** Finishes with `reason` and aborts the exchange (undici then destroys the socket). */
  stop(reason: StopReason): void {
    if (this.settled) return;
    const at = this.nowNs();
    this.settle(() => this.builder.stop(reason, at));
    this.controller?.abort(new Error(`tokenload: request ${reason.kind}`));
  }

  /** Resolves once with the record `make` returns, and releases the timer and listener. */
  settle(make: () => RawRecord): void {
    if (this.settled) return;
    this.settled = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.request.signal?.removeEventListener('abort', this.onAbort);
    this.resolve(make());
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(new Error('tokenload: request already finished'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
    statusMessage?: string,
  ): void {
    const at = this.nowNs();
    if (this.settled || statusCode < 200) return;
    this.builder.onHeaders(statusCode, headers, statusMessage ?? '', at);
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    const at = this.nowNs();
    if (!this.settled) this.builder.onData(chunk, at);
  }

  onResponseEnd(): void {
    const at = this.nowNs();
    this.settle(() => this.builder.end(at));
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.settled) return;
    const at = this.nowNs();
    this.settle(() => this.builder.stop({ kind: 'transport', error }, at));
  }
}
