/**
 * The measuring HTTP client: an undici `Pool` (keep-alive, pipelining 1) driven through the raw
 * dispatch-handler API, so each body read is timestamped in the data callback itself, once, before
 * any decoding (undici pool + on-data stamping measured the cheapest, lowest-lag
 * variant; the client ceiling in bench/README.md). undici's own 300 s header/body timeouts are disabled: a long prefill must never be cut
 * short by a library default. Instead `timeoutMs` is enforced from the send stamp by the client's
 * deadline list (deadlines.ts, one timer for all requests); when it passes, the request is aborted,
 * which makes undici destroy the socket. Cancellation signals are watched with one listener per
 * signal (abort-watch.ts).
 *
 * Per request the hot path allocates the promise, one {@link Exchange} (handler, deadline entry
 * and signal watcher in one object), the record and the header object, and no closure or timer;
 * per event only what decoding needs (record-builder.ts, endpoint/choices-scan.ts). The handler implements undici's dispatch-handler callbacks in their original
 * form (`onConnect`/`onHeaders`/`onData`/`onComplete`/`onError`, which undici 7 still calls
 * internally): the newer controller form is served through a per-request adapter that also parses
 * every response header into an object, where we read two.
 *
 * Requests are never retried and `send()` never rejects: every outcome is a {@link RawRecord}.
 */

import { subscribe } from 'node:diagnostics_channel';
import type { Dispatcher } from 'undici';
import { Pool } from 'undici';
import type { StopReason } from '../record/failure.js';
import type { RawRecord } from '../record/types.js';
import { monotonicNowNs } from '../timing/clock.js';
import { packageVersion } from '../util/package-root.js';
import { AbortWatch, type AbortWatcher } from './abort-watch.js';
import { Connector, type PrewarmResult, type SocketInfo } from './connector.js';
import { type Deadline, Deadlines } from './deadlines.js';
import { RecordBuilder } from './record-builder.js';
import { responseHeaders } from './response-headers.js';
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

/** Request headers: caller headers (lower-cased), then ours; content-type always ours (as AIPerf). */
export function requestHeaders(request: SendRequest, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {
    accept: request.stream ? 'text/event-stream' : 'application/json',
    'user-agent': userAgent,
  };
  const extra = request.headers;
  const names = Object.keys(extra);
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    headers[name.toLowerCase()] = extra[name] as string;
  }
  headers['content-type'] = 'application/json';
  return headers;
}

/** The single-process client, plus sends that can be cancelled by key (the worker threads' path). */
export interface PooledHttpClient extends HttpClient {
  /**
   * Sends like {@link HttpClient.send} but reports through `done(record, key)` instead of a promise
   * (exactly once; before this call returns when the request fails at once, e.g. a pre-aborted
   * signal), and can be cancelled with {@link PooledHttpClient.cancel} until then. `key` must be
   * unique among the keyed requests in flight.
   */
  sendKeyed(request: SendRequest, key: number, done: (record: RawRecord, key: number) => void): void;
  /** Cancels the keyed request in flight, as an aborted signal with `reason` would; no-op once it has finished. */
  cancel(key: number, reason?: unknown): void;
  /**
   * Opens `count` connections to the origin now, for the first requests to use (connector.ts);
   * never throws, failures are counted in the result.
   */
  prewarm(count: number): Promise<PrewarmResult>;
}

/** What every exchange of one client shares. */
interface ClientContext {
  readonly pool: Pool;
  readonly connector: Connector;
  readonly userAgent: string;
  readonly nowNs: () => number;
  readonly deadlines: Deadlines;
  readonly watch: AbortWatch;
  /** Keyed requests in flight. */
  readonly keyed: Map<number, Exchange>;
}

/**
 * Creates a pooled client bound to one origin.
 * @throws {TypeError} if `url` is not a valid absolute URL.
 */
export function createHttpClient(options: HttpClientOptions): PooledHttpClient {
  const origin = new URL(new URL(options.url).origin);
  const nowNs = options.nowNs ?? monotonicNowNs;
  const connector = new Connector(origin, options.connectTimeoutMs ?? 10_000, nowNs);
  const pool = new Pool(origin, {
    connections: options.connections,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: connector.connect,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
  });
  watchSocketWrites();
  const context: ClientContext = {
    pool,
    connector,
    userAgent: `tokenload/${packageVersion()}`,
    nowNs,
    deadlines: new Deadlines(nowNs),
    watch: new AbortWatch(),
    keyed: new Map(),
  };
  return {
    send: (request) =>
      new Promise<RawRecord>((resolve) => new Exchange(context, request, resolve, -1).start()),
    sendKeyed: (request, key, done) => {
      const exchange = new Exchange(context, request, done, key);
      context.keyed.set(key, exchange);
      exchange.start();
    },
    cancel: (key, reason) => context.keyed.get(key)?.onSignalAbort(reason),
    prewarm: (count) => connector.prewarm(count),
    reserveConnections: (count, dueNs) => connector.reserve(count, dueNs ?? nowNs()),
    close: async () => {
      connector.close();
      await pool.destroy();
      context.deadlines.close();
    },
  };
}

/**
 * The socket undici last wrote request headers on. undici publishes it on its `sendHeaders`
 * diagnostics channel in the same synchronous step that writes the request and then calls the
 * handler's `onRequestSent` (a request body given as a string or Buffer is written in one go), so
 * `onRequestSent` reads the socket of its own request here.
 */
let lastWrittenSocket: object | null = null;
let watching = false;

/** Subscribes once per thread to undici's `sendHeaders` channel. */
function watchSocketWrites(): void {
  if (watching) return;
  watching = true;
  subscribe('undici:client:sendHeaders', (message) => {
    lastWrittenSocket = (message as { socket: object }).socket;
  });
}

/** One request: its dispatch handler, deadline entry and signal watcher; `key` is -1 unless keyed. */
class Exchange implements Dispatcher.DispatchHandler, Deadline, AbortWatcher {
  private readonly builder: RecordBuilder;
  private abort: ((err?: Error) => void) | null = null;
  private settled = false;
  /** The connection the request went out on, once written (when the connector opened it). */
  private socketInfo: SocketInfo | undefined = undefined;
  deadlineNs = 0;
  prevDeadline: Deadline | null = null;
  nextDeadline: Deadline | null = null;
  inDeadlines = false;
  prevWatcher: AbortWatcher | null = null;
  nextWatcher: AbortWatcher | null = null;
  watching: AbortSignal | null = null;

  constructor(
    private readonly context: ClientContext,
    private readonly request: SendRequest,
    private readonly resolve: (record: RawRecord, key: number) => void,
    private readonly key: number,
  ) {
    this.builder = new RecordBuilder(request);
  }

  /** Stamps the send, arms the timeout and cancellation, and dispatches (or fails at once). */
  start(): void {
    const { context, request, builder } = this;
    const headers = requestHeaders(request, context.userAgent);
    const startNs = context.nowNs();
    builder.raw.startNs = startNs;
    const signal = request.signal;
    if (signal?.aborted === true) {
      this.stop({ kind: 'cancelled', reason: signal.reason });
      return;
    }
    this.deadlineNs = startNs + request.timeoutMs * 1e6;
    context.deadlines.add(this);
    if (signal !== undefined) context.watch.add(signal, this);
    try {
      context.pool.dispatch({ path: request.path, method: 'POST', headers, body: request.body }, this);
    } catch (err) {
      if (this.settled) return;
      const message = err instanceof Error ? err.message : String(err);
      this.finish(builder.fail('DispatchError', message, context.nowNs()));
    }
  }

  /** {@link Deadline}: the request timeout passed. */
  expire(): void {
    this.stop({ kind: 'timeout', timeoutMs: this.request.timeoutMs });
  }

  /** {@link AbortWatcher}: the request's signal aborted (or its key was cancelled). */
  onSignalAbort(reason: unknown): void {
    this.stop({ kind: 'cancelled', reason });
  }

  /** Finishes with `reason` and aborts the exchange (undici then destroys the socket). */
  private stop(reason: StopReason): void {
    if (this.settled) return;
    const at = this.context.nowNs();
    this.finish(this.builder.stop(reason, at));
    this.abort?.(new Error(`tokenload: request ${reason.kind}`));
  }

  /** Resolves once with `record`, and leaves the deadline list, the signal watch and the keyed map. */
  private finish(record: RawRecord): void {
    this.settled = true;
    const context = this.context;
    context.deadlines.remove(this);
    context.watch.remove(this);
    if (this.key >= 0) context.keyed.delete(this.key);
    this.resolve(record, this.key);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.settled) abort(new Error('tokenload: request already finished'));
  }

  /** The request's last byte was handed to the socket (undici calls this right after the write). */
  onRequestSent(): void {
    const at = this.context.nowNs();
    const socket = lastWrittenSocket;
    lastWrittenSocket = null;
    if (this.settled) return;
    const raw = this.builder.raw;
    raw.sentNs = at;
    const info = socket === null ? undefined : this.context.connector.info(socket);
    if (info === undefined) return;
    const reused = info.prewarmed || info.uses > 0;
    raw.connectionReused = reused;
    raw.connectDurationNs = reused ? null : info.connectDurationNs;
    if (info.uses === 0 && info.replaced !== null) raw.idleClose = info.replaced;
    this.context.connector.written(socket as object, info);
    this.socketInfo = info;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], _resume: () => void, statusText: string): boolean {
    const at = this.context.nowNs();
    if (this.settled || statusCode < 200) return true;
    const headers = responseHeaders(rawHeaders);
    if (this.socketInfo !== undefined) this.socketInfo.keepAliveS = keepAliveTimeoutS(headers['keep-alive']);
    this.builder.onHeaders(statusCode, headers, statusText ?? '', at);
    return true;
  }

  onData(chunk: Buffer): boolean {
    const at = this.context.nowNs();
    if (this.settled) return true;
    this.builder.onData(chunk, at);
    // An event that is not JSON, or over the size cap, ends the request there: stop reading.
    if (this.builder.readingEnded) {
      this.finish(this.builder.end(at));
      this.abort?.(new Error('tokenload: stream reading ended at an unreadable event'));
    }
    return true;
  }

  onComplete(): void {
    const at = this.context.nowNs();
    // The connection is idle from here (a close after this is an idle close, connector.ts).
    if (this.socketInfo !== undefined) this.context.connector.answered(this.socketInfo, at);
    if (!this.settled) this.finish(this.builder.end(at));
  }

  onError(error: Error): void {
    if (this.settled) return;
    const at = this.context.nowNs();
    this.finish(this.builder.stop({ kind: 'transport', error }, at));
  }
}

/** The `timeout=N` of a `Keep-Alive` response header, s; null when absent or unreadable. */
function keepAliveTimeoutS(header: string | string[] | undefined): number | null {
  const text = Array.isArray(header) ? header.join(',') : header;
  const match = text === undefined ? null : /(?:^|[,\s])timeout=(\d+(?:\.\d+)?)/i.exec(text);
  return match === null ? null : Number(match[1]);
}
