/**
 * The client's connection opener: undici's own connector (`buildConnector`, the code undici runs by
 * default), wrapped to do two things undici does not:
 * - **time every connect** and remember, per socket, how long opening it took and how many requests
 *   it has carried, so each record can say whether it reused a connection or waited for a new one;
 * - **pre-open connections** ({@link Connector.prewarm}) before the first measured request, so the
 *   first seconds of an open-loop run do not pay a TCP (and TLS) handshake per request while the
 *   number of in-flight requests ramps up. A pre-opened socket waits in a stash until undici asks for
 *   a connection; stashed sockets that the server closes leave the stash, and any still unused after
 *   {@link STASH_IDLE_MS} are closed by us, well inside the idle timeouts servers use (5 s for
 *   uvicorn, which vLLM and SGLang run on, and for Node's http server), so a request never gets a
 *   socket the server has already given up on;
 * - **open connections ahead of need** ({@link Connector.reserve}) while the run goes on: a
 *   strategy that builds requests ahead of their send time (a fixed schedule's look-ahead) asks for
 *   as many spare connections as it holds built requests, so a burst that finds every connection
 *   busy (a slow server holding thousands of streams) goes out on open sockets at once instead of
 *   each request waiting for a handshake behind the event loop's other work.
 *
 * Both land in the same stash: a socket in it waits until undici asks for a connection; one the
 * server closes leaves the stash, and one still unused {@link STASH_IDLE_MS} after it was opened is
 * closed by us, well inside the idle timeouts servers use (5 s for uvicorn, which vLLM and SGLang
 * run on, and for Node's http server), so a request never gets a socket the server has already
 * given up on.
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';

/** Unused pre-opened sockets are closed after this long, ms. */
export const STASH_IDLE_MS = 2000;

/** What the connector knows of one open socket. */
export interface SocketInfo {
  /** How long opening it took, ns; 0 for a pre-opened socket (no request waited for it). */
  connectDurationNs: number;
  /** Requests written on it so far. */
  uses: number;
  /**
   * Opened before any request asked for it: by {@link Connector.prewarm} before the run, or by
   * {@link Connector.reserve} ahead of a built request.
   */
  prewarmed: boolean;
}

/** Outcome of {@link Connector.prewarm}. */
export interface PrewarmResult {
  /** Connections asked for. */
  requested: number;
  /** Connections opened. */
  opened: number;
  /** Connections that failed to open (the first error's message in `error`). */
  failed: number;
  error?: string;
  /** Wall time until every attempt settled, ms. */
  durationMs: number;
}

/**
 * One result of several pre-opening clients (worker threads, servers): counts summed, the first error
 * kept, `requested` and `durationMs` as given.
 */
export function sumPrewarms(
  requested: number,
  results: readonly PrewarmResult[],
  durationMs: number,
): PrewarmResult {
  let opened = 0;
  let failed = 0;
  let error: string | undefined;
  for (const r of results) {
    opened += r.opened;
    failed += r.failed;
    error ??= r.error;
  }
  return { requested, opened, failed, ...(error === undefined ? {} : { error }), durationMs };
}

/** Where to connect: the fields undici's connector reads, for the client's origin. */
type ConnectOptions = buildConnector.Options;
type ConnectCallback = buildConnector.Callback;

/** A pre-opened socket waiting for a request, and the listener that drops it if the server closes it. */
interface Stashed {
  socket: Socket;
  drop: () => void;
  /** `performance.now()` when it joined the stash, ms. */
  sinceMs: number;
}

/** undici's connector, timed, with a stash of pre-opened sockets. */
export class Connector {
  private readonly base: buildConnector.connector;
  private readonly sockets = new WeakMap<object, SocketInfo>();
  private readonly stash: Stashed[] = [];
  private stashTimer: NodeJS.Timeout | null = null;
  /** Sockets {@link Connector.reserve} is still opening. */
  private opening = 0;
  private closed = false;

  /**
   * @param origin the server origin, e.g. `http://127.0.0.1:8000`.
   * @param connectTimeoutMs TCP (+TLS) connect timeout.
   * @param nowNs the client's monotonic ns clock.
   */
  constructor(
    private readonly origin: URL,
    connectTimeoutMs: number,
    private readonly nowNs: () => number,
  ) {
    this.base = buildConnector({ timeout: connectTimeoutMs });
  }

  /** The `connect` option of undici's Pool: a stashed socket if one is alive, else a timed new one. */
  readonly connect = (options: ConnectOptions, callback: ConnectCallback): void => {
    const warm = this.takeStashed();
    if (warm !== null) {
      // Asynchronously, as a real connect would: undici ignores a resume requested from inside its
      // own resume, so a synchronous answer would leave the request unsent.
      queueMicrotask(() => callback(null, warm));
      return;
    }
    const t0 = this.nowNs();
    this.base(options, (...args) => {
      const socket = args[1];
      if (args[0] === null && socket != null)
        this.sockets.set(socket, { connectDurationNs: this.nowNs() - t0, uses: 0, prewarmed: false });
      callback(...args);
    });
  };

  /** What is known of `socket` (a socket this connector opened), or undefined. */
  info(socket: object): SocketInfo | undefined {
    return this.sockets.get(socket);
  }

  /**
   * Opens `count` connections to the origin at once and keeps them for the run's first requests.
   * Never throws: failures are counted (the run then opens connections as it goes, as without this).
   */
  async prewarm(count: number): Promise<PrewarmResult> {
    const t0 = performance.now();
    const attempts: Promise<Socket | Error>[] = [];
    for (let i = 0; i < count; i++) attempts.push(this.openOne());
    const results = await Promise.all(attempts);
    let failed = 0;
    let error: string | undefined;
    for (const result of results) {
      if (result instanceof Error) {
        failed++;
        error ??= result.message;
        continue;
      }
      this.stashOne(result);
    }
    const opened = count - failed;
    return {
      requested: count,
      opened,
      failed,
      ...(error === undefined ? {} : { error }),
      durationMs: performance.now() - t0,
    };
  }

  /**
   * Makes `count` connections ready ahead of need: opens, in the background, as many as the stash
   * (with those still opening) is short of `count`. Never throws; a failed open is dropped (the
   * request that would have used it opens its own connection, as without this).
   */
  reserve(count: number): void {
    if (this.closed) return;
    for (let missing = count - this.stash.length - this.opening; missing > 0; missing--) {
      this.opening++;
      void this.openOne().then((result) => {
        this.opening--;
        if (result instanceof Error) return;
        if (this.closed) result.destroy();
        else this.stashOne(result);
      });
    }
  }

  /** Closes every stashed socket, and any that {@link Connector.reserve} is still opening. */
  close(): void {
    this.closed = true;
    if (this.stashTimer !== null) clearTimeout(this.stashTimer);
    this.stashTimer = null;
    for (const entry of this.stash.splice(0)) this.release(entry).destroy();
  }

  private openOne(): Promise<Socket | Error> {
    const url = this.origin;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const options: ConnectOptions = { hostname, host: url.host, protocol: url.protocol, port: url.port };
    return new Promise((resolve) => {
      this.base(options, (...args) =>
        resolve(args[0] ?? (args[1] as Socket | undefined) ?? new Error('no socket')),
      );
    });
  }

  /**
   * Keeps `socket` until a request needs it. It is read while it waits (nothing is expected), so a
   * close or end from the server is seen at once and the socket leaves the stash.
   */
  private stashOne(socket: Socket): void {
    this.sockets.set(socket, { connectDurationNs: 0, uses: 0, prewarmed: true });
    const entry: Stashed = { socket, drop: () => this.drop(entry), sinceMs: performance.now() };
    socket.on('end', entry.drop);
    socket.on('close', entry.drop);
    socket.resume();
    this.stash.push(entry);
    this.armStashTimer();
  }

  private drop(entry: Stashed): void {
    const at = this.stash.indexOf(entry);
    if (at >= 0) this.stash.splice(at, 1);
    this.release(entry);
    entry.socket.destroy();
  }

  /** Removes this connector's listeners and stops reading, as undici expects a new socket. */
  private release(entry: Stashed): Socket {
    entry.socket.off('end', entry.drop);
    entry.socket.off('close', entry.drop);
    entry.socket.pause();
    return entry.socket;
  }

  /** The newest live stashed socket, or null; it leaves the stash as a fresh socket would arrive. */
  private takeStashed(): Socket | null {
    for (let entry = this.stash.pop(); entry !== undefined; entry = this.stash.pop()) {
      const socket = this.release(entry);
      if (!socket.destroyed && socket.writable && !socket.readableEnded) return socket;
      socket.destroy();
    }
    return null;
  }

  /** Arms the sweep that closes stashed sockets {@link STASH_IDLE_MS} after they were opened. */
  private armStashTimer(): void {
    // The stash is in the order sockets joined it (pushed at the end, taken from the end).
    const oldest = this.stash[0];
    if (this.stashTimer !== null || oldest === undefined) return;
    const waitMs = Math.max(0, oldest.sinceMs + STASH_IDLE_MS - performance.now());
    this.stashTimer = setTimeout(() => this.sweepStash(), waitMs);
    this.stashTimer.unref();
  }

  /** Closes the stashed sockets whose time is up, and re-arms for the rest. */
  private sweepStash(): void {
    this.stashTimer = null;
    const dueMs = performance.now() - STASH_IDLE_MS;
    for (const entry of this.stash.filter((e) => e.sinceMs <= dueMs)) this.drop(entry);
    this.armStashTimer();
  }
}
