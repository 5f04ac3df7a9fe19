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
 *   socket the server has already given up on.
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
  /** Opened by {@link Connector.prewarm} before the run. */
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

/** Where to connect: the fields undici's connector reads, for the client's origin. */
type ConnectOptions = buildConnector.Options;
type ConnectCallback = buildConnector.Callback;

/** A pre-opened socket waiting for a request, and the listener that drops it if the server closes it. */
interface Stashed {
  socket: Socket;
  drop: () => void;
}

/** undici's connector, timed, with a stash of pre-opened sockets. */
export class Connector {
  private readonly base: buildConnector.connector;
  private readonly sockets = new WeakMap<object, SocketInfo>();
  private readonly stash: Stashed[] = [];
  private stashTimer: NodeJS.Timeout | null = null;

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
      // On a failed connect undici passes (error) alone: no socket to note.
      if (socket !== null && socket !== undefined)
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
      this.sockets.set(result, { connectDurationNs: 0, uses: 0, prewarmed: true });
      this.stashOne(result);
    }
    if (this.stash.length > 0) this.armStashTimer();
    const opened = count - failed;
    return {
      requested: count,
      opened,
      failed,
      ...(error === undefined ? {} : { error }),
      durationMs: performance.now() - t0,
    };
  }

  /** Closes every stashed socket. */
  close(): void {
    if (this.stashTimer !== null) clearTimeout(this.stashTimer);
    this.stashTimer = null;
    for (const entry of this.stash.splice(0)) this.release(entry).destroy();
  }

  private openOne(): Promise<Socket | Error> {
    const url = this.origin;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const options: ConnectOptions = { hostname, host: url.host, protocol: url.protocol, port: url.port };
    return new Promise((resolve) => {
      this.base(options, (...args) => resolve(args[0] ?? (args[1] as Socket)));
    });
  }

  /**
   * Keeps `socket` until a request needs it. It is read while it waits (nothing is expected), so a
   * close or end from the server is seen at once and the socket leaves the stash.
   */
  private stashOne(socket: Socket): void {
    const entry: Stashed = { socket, drop: () => this.drop(entry) };
    socket.on('end', entry.drop);
    socket.on('close', entry.drop);
    socket.resume();
    this.stash.push(entry);
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

  /** Closes the stash once {@link STASH_IDLE_MS} have passed. */
  private armStashTimer(): void {
    this.stashTimer = setTimeout(() => this.close(), STASH_IDLE_MS);
    this.stashTimer.unref();
  }
}
