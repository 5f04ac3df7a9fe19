/**
 * The client's connection opener: undici's own connector (`buildConnector`, the code undici runs by
 * default), wrapped to do what undici does not:
 * - **time every connect** and remember, per socket, how long opening it took and how many requests
 *   it has carried, so each record can say whether it reused a connection or waited for a new one;
 * - **pre-open connections** ({@link Connector.prewarm}) before the first measured request, so the
 *   first seconds of an open-loop run do not pay a TCP (and TLS) handshake per request while the
 *   number of in-flight requests ramps up;
 * - **open connections just before need** ({@link Connector.reserve}) while the run goes on: a
 *   strategy that builds requests ahead of their send time (a fixed schedule's look-ahead) asks for
 *   as many connections as it holds built requests, due when the earliest of them is to be sent;
 *   the missing ones are opened {@link Connector.leadMs} before that (twice the slowest recent
 *   connect + {@link RESERVE_LEAD_MARGIN_MS}, at most {@link RESERVE_LEAD_CAP_MS}), not when the
 *   request is built up to a second earlier, so a server with a short idle timeout does not close
 *   them first, and a burst that finds every connection busy goes out on open sockets;
 * - **see idle connections close** ({@link IdleClose}): a pool connection that closes while no
 *   request is on it (a keep-alive timeout: the server's, or undici's own, which follows the server's
 *   `Keep-Alive: timeout=N` hint) is remembered, and the next connection opened for a request (or
 *   taken from the stash) carries that close, so its first record says why it needed a new one.
 *
 * - **write at once on a clean idle connection** (idle-check.ts): undici waits one `setImmediate`
 *   before it writes on a reused idle connection, to read what the server may have sent on it; the
 *   connector tells undici which idle connections have already been read since they went idle, and
 *   undici writes on those in the same turn.
 *
 * Pre-opened sockets wait in a stash until undici asks for a connection; one the server closes
 * leaves the stash, and one still unused {@link STASH_IDLE_MS} after it was opened is closed by us,
 * well inside the idle timeouts servers use (5 s for uvicorn, which vLLM and SGLang run on, and for
 * Node's http server), so a request never gets a socket the server has already given up on.
 */
import type { Socket } from 'node:net';
import { buildConnector } from 'undici';
import type { IdleClose } from '../record/types.js';
import { LoopTurns, trustCleanIdleSocket } from './idle-check.js';

/** Unused pre-opened sockets are closed after this long, ms. */
export const STASH_IDLE_MS = 2000;

/** Added to twice the slowest recent connect to give the lead of {@link Connector.reserve}, ms. */
export const RESERVE_LEAD_MARGIN_MS = 20;

/** The most {@link Connector.reserve} opens a connection ahead of its send, ms (also its lead before any connect was timed). */
export const RESERVE_LEAD_CAP_MS = 250;

/** How many of the latest connect times the lead looks at. */
const RECENT_CONNECTS = 16;

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
  /** A request is on it: written, its answer not yet complete. */
  busy: boolean;
  /** Client ns when its last answer completed; null before the first. */
  idleSinceNs: number | null;
  /** The loop turn from which it is known clean while idle (idle-check.ts); null before its first answer. */
  cleanAtTurn: number | null;
  /** The keep-alive timeout the server announced on it (`Keep-Alive: timeout=N`), s; null when none. */
  keepAliveS: number | null;
  /** The idle close this connection replaced (given to the first request on it); null when none. */
  replaced: IdleClose | null;
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
  /** Requests that asked for a connection while reserved ones were opening, oldest first (at most {@link Connector.opening}). */
  private readonly waiting: { options: ConnectOptions; callback: ConnectCallback }[] = [];
  private closed = false;
  /** Pool connections that closed while idle and were not replaced yet, oldest first. */
  private readonly idleCloses: IdleClose[] = [];
  /** The latest connect times, ms (a ring of {@link RECENT_CONNECTS}). */
  private readonly connectsMs: number[] = [];
  /** The reservation waiting for its time: the latest count, the earliest due time. */
  private pending: { count: number; dueNs: number } | null = null;
  /** Sockets handed to undici's pool and not closed yet. */
  private inPool = 0;
  /** Of those, the ones a request is on (written, answer not complete). */
  private busyInPool = 0;
  /** Loop turns, to know when an idle connection has been read since it went idle. */
  private readonly turns = new LoopTurns();
  private pendingTimer: NodeJS.Timeout | null = null;

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

  /**
   * The `connect` option of undici's Pool: a stashed socket if one is alive, else one that
   * {@link Connector.reserve} is still opening (a reserve timer that fired late never makes a
   * request open a second connection beside it), else a timed new one.
   */
  readonly connect = (options: ConnectOptions, callback: ConnectCallback): void => {
    const warm = this.takeStashed();
    if (warm !== null) {
      this.enterPool(warm);
      // Asynchronously, as a real connect would: undici ignores a resume requested from inside its
      // own resume, so a synchronous answer would leave the request unsent.
      queueMicrotask(() => callback(null, warm));
      return;
    }
    if (this.waiting.length < this.opening) {
      this.waiting.push({ options, callback });
      return;
    }
    this.connectNew(options, callback);
  };

  /** Opens a connection for a request that asked for one, timed. */
  private connectNew(options: ConnectOptions, callback: ConnectCallback): void {
    const t0 = this.nowNs();
    this.base(options, (...args) => {
      const socket = args[1];
      if (args[0] === null && socket != null) {
        const durationNs = this.nowNs() - t0;
        this.noteConnect(durationNs / 1e6);
        this.sockets.set(socket, socketInfo(durationNs, false));
        this.enterPool(socket);
      }
      callback(...args);
    });
  }

  /**
   * How long before a reserved connection's due time it is opened, ms: twice the slowest of the
   * latest connect times + {@link RESERVE_LEAD_MARGIN_MS}, at most {@link RESERVE_LEAD_CAP_MS} (the
   * cap before any connect was timed).
   */
  leadMs(): number {
    if (this.connectsMs.length === 0) return RESERVE_LEAD_CAP_MS;
    const lead = 2 * Math.max(...this.connectsMs) + RESERVE_LEAD_MARGIN_MS;
    return Math.min(RESERVE_LEAD_CAP_MS, Math.round(lead * 1000) / 1000);
  }

  /** What is known of `socket` (a socket this connector opened), or undefined. */
  info(socket: object): SocketInfo | undefined {
    return this.sockets.get(socket);
  }

  /**
   * Pool connections open with no request on them: kept as a count (as requests are written and
   * answered, and connections open and close), so reading it costs nothing whatever the pool's size.
   * A connection just handed to undici for a request counts as free until that request is written.
   */
  free(): number {
    return this.inPool - this.busyInPool;
  }

  /**
   * A request was written on `socket` (`info` its {@link Connector.info}): the connection is busy.
   * On its first request, undici is told to write at once on it once it is idle and known clean.
   */
  written(socket: object, info: SocketInfo): void {
    if (info.uses === 0) trustCleanIdleSocket(socket, info, this.turns);
    info.uses++;
    if (!info.busy) this.busyInPool++;
    info.busy = true;
  }

  /** The answer on the connection of `info` completed at `atNs` (client ns): it is idle from now. */
  answered(info: SocketInfo, atNs: number): void {
    if (info.busy) this.busyInPool--;
    info.busy = false;
    info.idleSinceNs = atNs;
    info.cleanAtTurn = this.turns.idleNow();
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
   * Makes `count` connections ready for requests due from `dueNs` (client ns) on: at `dueNs` less
   * {@link Connector.leadMs} (at once when that has passed), opens in the background as many as the
   * free pool connections ({@link Connector.free}, read then), the stash and those still opening are short of
   * `count`. A call before that time replaces the count and keeps the earlier due time. Never
   * throws; a failed open is dropped (the request that would have used it opens its own connection,
   * as without this).
   */
  reserve(count: number, dueNs: number): void {
    if (this.closed) return;
    const earlier = this.pending === null ? dueNs : Math.min(this.pending.dueNs, dueNs);
    this.pending = { count, dueNs: earlier };
    const waitMs = (earlier - this.nowNs()) / 1e6 - this.leadMs();
    if (this.pendingTimer !== null) clearTimeout(this.pendingTimer);
    this.pendingTimer = null;
    if (waitMs <= 0) {
      this.openPending();
      return;
    }
    this.pendingTimer = setTimeout(() => this.openPending(), waitMs);
    this.pendingTimer.unref();
  }

  /** Closes every stashed socket, and any that {@link Connector.reserve} is still opening. */
  close(): void {
    this.closed = true;
    if (this.pendingTimer !== null) clearTimeout(this.pendingTimer);
    this.pending = null;
    if (this.stashTimer !== null) clearTimeout(this.stashTimer);
    this.stashTimer = null;
    for (const entry of this.stash.splice(0)) this.release(entry).destroy();
  }

  /** Opens what the pending reservation is short of, now. */
  private openPending(): void {
    const pending = this.pending;
    this.pending = null;
    if (this.pendingTimer !== null) clearTimeout(this.pendingTimer);
    this.pendingTimer = null;
    if (pending === null || this.closed) return;
    const missing = pending.count - this.free() - this.stash.length - this.opening;
    for (let i = 0; i < missing; i++) {
      this.opening++;
      void this.openOne().then((result) => this.settleReserved(result));
    }
  }

  /**
   * A reserved connection finished opening: a request already waiting for it takes it (as a
   * pre-opened socket), else it joins the stash. When it failed, the waiting request opens its own.
   */
  private settleReserved(result: Socket | Error): void {
    this.opening--;
    const waiter = this.waiting.shift();
    if (result instanceof Error) {
      if (waiter !== undefined) this.connectNew(waiter.options, waiter.callback);
      return;
    }
    if (waiter !== undefined) {
      this.sockets.set(result, socketInfo(0, true));
      this.enterPool(result);
      waiter.callback(null, result);
    } else if (this.closed) result.destroy();
    else this.stashOne(result);
  }

  private openOne(): Promise<Socket | Error> {
    const url = this.origin;
    const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const options: ConnectOptions = { hostname, host: url.host, protocol: url.protocol, port: url.port };
    const t0 = this.nowNs();
    return new Promise((resolve) => {
      this.base(options, (...args) => {
        if (args[0] === null) this.noteConnect((this.nowNs() - t0) / 1e6);
        resolve(args[0] ?? (args[1] as Socket | undefined) ?? new Error('no socket'));
      });
    });
  }

  /** Keeps one connect time among the latest {@link RECENT_CONNECTS}. */
  private noteConnect(ms: number): void {
    this.connectsMs.push(ms);
    if (this.connectsMs.length > RECENT_CONNECTS) this.connectsMs.shift();
  }

  /**
   * A socket joins undici's pool: it replaces the oldest idle close not yet replaced, and its own
   * close is watched (a close while no request is on it is an idle close).
   */
  private enterPool(socket: Socket): void {
    const info = this.sockets.get(socket);
    if (info === undefined) return;
    info.replaced = this.idleCloses.shift() ?? null;
    this.inPool++;
    let peerEnded = false;
    socket.once('end', () => {
      peerEnded = true;
    });
    socket.once('close', () => {
      this.inPool--;
      const busy = info.busy;
      if (busy) this.busyInPool--;
      info.busy = false;
      if (busy || info.idleSinceNs === null || this.closed) return;
      const idleNs = this.nowNs() - info.idleSinceNs;
      this.idleCloses.push({ idleNs, byServer: peerEnded, keepAliveS: info.keepAliveS });
    });
  }

  /**
   * Keeps `socket` until a request needs it. It is read while it waits (nothing is expected), so a
   * close or end from the server is seen at once and the socket leaves the stash.
   */
  private stashOne(socket: Socket): void {
    this.sockets.set(socket, socketInfo(0, true));
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

function socketInfo(connectDurationNs: number, prewarmed: boolean): SocketInfo {
  return {
    connectDurationNs,
    uses: 0,
    prewarmed,
    busy: false,
    idleSinceNs: null,
    cleanAtTurn: null,
    keepAliveS: null,
    replaced: null,
  };
}
