/**
 * Connections closed while idle: a sparse schedule (a request every 7 s) against a server that
 * closes a kept-alive connection after 5 s idle (uvicorn's `timeout_keep_alive`, Node's
 * `server.keepAliveTimeout`) makes each request need a new connection. That wait is the server's
 * keep-alive policy, not a late client: the client-health verdict counts it as the server's (the
 * request's send lag, as judged, leaves it out) and says so in one sentence.
 *
 * Who closed it: the server (its end of the connection ended first), or the client, whose pool
 * (undici) closes an idle connection on its own timer: the server's announced timeout
 * (`Keep-Alive: timeout=N` response header) less 2 s, or 4 s when the server announces none (undici's
 * `keepAliveTimeout` and `keepAliveTimeoutThreshold` defaults), so that it never writes on a
 * connection the server is closing. The client's connector (client/connector.ts) sees the close and
 * gives it to the first request on the next connection ({@link IdleClose}).
 */
import type { IdleClose, ProcessedRecord } from '../record/types.js';

/** `client_health.idle_closed_connections`: scheduled requests whose connection had closed while idle. */
export interface IdleClosedConnections {
  /** Scheduled requests whose connection had been closed while idle. */
  requests: number;
  /** Of those, the ones that waited for a new connection; the rest got one opened just before their send. */
  waited: number;
  /** The longest `connection_wait` of those that waited, ms (0 when none waited); not counted as send lag. */
  wait_ms_max: number;
  /** The median time the closed connections had been idle when they closed, s. */
  idle_s: number;
  /** Closes the server made. */
  closed_by_server: number;
  /** Closes the client's pool made on its keep-alive timer. */
  closed_by_client: number;
  /** The keep-alive timeout the server announced (`Keep-Alive: timeout=N`), s; null when it announced none. */
  server_keep_alive_s: number | null;
}

/** Gathers the idle closes of a run's scheduled requests. */
export class IdleCloseTally {
  private readonly idleNs: number[] = [];
  private waited = 0;
  private waitMaxMs = 0;
  private byServer = 0;
  private keepAliveS: number | null = null;

  /**
   * Adds one scheduled record and returns the part of its send lag that was the server's: its
   * `connection_wait` when it waited for a new connection because the last one closed while idle, else 0.
   */
  add(record: ProcessedRecord): number {
    const close: IdleClose | undefined = record.raw.idleClose;
    if (close === undefined) return 0;
    this.idleNs.push(close.idleNs);
    if (close.byServer) this.byServer++;
    if (close.keepAliveS !== null) this.keepAliveS = close.keepAliveS;
    const waitMs = record.metrics.connection_wait;
    if (record.raw.connectionReused !== false || typeof waitMs !== 'number') return 0;
    this.waited++;
    this.waitMaxMs = Math.max(this.waitMaxMs, waitMs);
    return waitMs;
  }

  /** The section; null when no scheduled request followed an idle close. */
  build(): IdleClosedConnections | null {
    const n = this.idleNs.length;
    if (n === 0) return null;
    const sorted = [...this.idleNs].sort((a, b) => a - b);
    const medianNs = ((sorted[(n - 1) >> 1] as number) + (sorted[n >> 1] as number)) / 2;
    return {
      requests: n,
      waited: this.waited,
      wait_ms_max: Math.round(this.waitMaxMs * 1000) / 1000,
      idle_s: Math.round(medianNs / 1e7) / 100,
      closed_by_server: this.byServer,
      closed_by_client: n - this.byServer,
      server_keep_alive_s: this.keepAliveS,
    };
  }
}

/** Below this idle time (s) a connection counts as closed right after its answer. */
const AT_ONCE_S = 0.05;

/**
 * The verdict's sentence on idle closes, e.g. "the server closed idle connections after ~5 s (its
 * keep-alive timeout); 3 requests waited for a new connection (up to 0.9 ms, counted as the
 * server's, not as send lag), 2 got one opened just before their send".
 */
export function idleCloseNote(s: IdleClosedConnections): string {
  const after = s.idle_s < AT_ONCE_S ? 'right after each answer' : `after ~${approx(s.idle_s)} s`;
  const announced = s.server_keep_alive_s;
  let who: string;
  if (s.closed_by_server >= s.closed_by_client)
    who = `the server closed idle connections ${after} (its keep-alive timeout)`;
  else if (announced !== null)
    who = `the server's keep-alive timeout of ${announced} s (its Keep-Alive header) made the client close idle connections ${after}, before the server would`;
  else
    who = `the client closed idle connections ${after} (undici's keep-alive default of 4 s; the server announced no timeout)`;
  const ahead = s.requests - s.waited;
  const waited =
    s.waited === 0
      ? 'no request waited for a new connection'
      : `${s.waited} ${s.waited === 1 ? 'request' : 'requests'} waited for a new connection (up to ${s.wait_ms_max} ms, counted as the server's, not as send lag)`;
  const opened = ahead === 0 ? '' : `, ${ahead} got one opened just before their send`;
  return `${who}; ${waited}${opened}`;
}

/** One decimal from 1 s, two below: 4.97 → "5", 12.34 → "12.3", 0.984 → "0.98". */
function approx(s: number): string {
  return s >= 1 ? String(Math.round(s * 10) / 10).replace(/\.0$/, '') : String(Math.round(s * 100) / 100);
}
