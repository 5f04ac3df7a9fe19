/**
 * The client-health verdict: did the load generator keep its schedule, and if not, was it the
 * client's own load? Judged against the floor the run measured at start-up ({@link ClientFloor}), so
 * a machine that wakes idle processes late (a halting vCPU, other processes on the cores) is not
 * mistaken for a busy client. Statuses, in order of precedence:
 *
 * - `saturated`: the busiest event loop was busy more than {@link HEALTH_LIMITS.saturatedUtilization}
 *   of the time, or sends were late while it was busy more than {@link HEALTH_LIMITS.busyUtilization}:
 *   the client, not the server, limited the run; timings are inflated.
 * - `late`: sends were late (send lag above the wake floor p99 + {@link HEALTH_LIMITS.sendLagMarginMs})
 *   on a client that was not loaded; `late_cause` says why: `bursts` (requests scheduled on one
 *   instant went out one after another), `pauses` (the event loop stopped for as long as the lateness:
 *   a GC pause, or another process holding the core, which the verdict names when the main thread ran
 *   for less than half the time its loop was busy) or `waits` (neither: the time was spent outside
 *   the event loop, e.g. waiting for a connection or the socket).
 * - `busy`: sends on time, but the loop was busy more than `busyUtilization` of the time, or its delay
 *   p99 exceeded the idle loop's by more than {@link HEALTH_LIMITS.loopDelayMarginMs}: timestamps may
 *   be late by up to the loop delay.
 * - `ok`: none of these.
 */
import { type ClientFloor, round3 } from './client-floor.js';
import { idleCloseNote } from './idle-closes.js';
import type { ClientHealth, HealthFigures, HealthStatus, LateCause } from './types.js';

/** Margins over the floor (ms) and utilization bounds (0–1) of the verdict. */
export const HEALTH_LIMITS = {
  /** Sends are on time while send lag p99 ≤ wake floor p99 + this. */
  sendLagMarginMs: 2,
  /** The loop is busy when its delay p99 exceeds the idle loop's p99 by more than this. */
  loopDelayMarginMs: 5,
  busyUtilization: 0.7,
  saturatedUtilization: 0.9,
} as const;

/** Below this many scheduled requests the verdict uses send lag p90: p99 would be one outlier. */
const P99_MIN_SAMPLES = 100;

/** The send-lag and loop-delay limits of a run with this floor, ms. */
export function healthLimits(floor: ClientFloor): ClientHealth['limits_ms'] {
  return {
    send_lag_p99: round3(floor.wake_floor_ms.p99 + HEALTH_LIMITS.sendLagMarginMs),
    loop_delay_p99: round3(floor.idle_loop_delay_ms.p99 + HEALTH_LIMITS.loopDelayMarginMs),
  };
}

/** The judged figures of one run. */
interface Judged {
  limits: ClientHealth['limits_ms'];
  /** Send lag p99 (p90 under {@link P99_MIN_SAMPLES} requests); 0 without a schedule. */
  lagMs: number;
  lagLabel: 'p90' | 'p99';
  /** The busiest event loop's utilization (main thread or a worker). */
  elu: number;
}

/** Adds `limits_ms`, `status`, `late_cause`, `saturated` and `verdict` to the measured figures. */
export function judge(figures: HealthFigures): ClientHealth {
  const lag = figures.send_lag_ms;
  const small = lag !== null && (lag.count ?? 0) < P99_MIN_SAMPLES;
  const workerElus = (figures.workers ?? []).map((w) => w.event_loop_utilization);
  const j: Judged = {
    limits: healthLimits(figures),
    lagMs: lag === null ? 0 : small ? (lag.p90 ?? lag.p99) : lag.p99,
    lagLabel: small ? 'p90' : 'p99',
    elu: Math.max(figures.event_loop_utilization, ...workerElus),
  };
  const status = statusOf(figures, j);
  const cause = status === 'late' ? lateCause(figures, j.lagMs) : undefined;
  return {
    ...figures,
    limits_ms: j.limits,
    status,
    ...(cause === undefined ? {} : { late_cause: cause }),
    saturated: status === 'saturated',
    verdict: withIdleCloses(verdictOf(status, cause, figures, j), figures),
  };
}

/** The verdict, with the sentence on connections closed while idle when there were any (idle-closes.ts). */
function withIdleCloses(verdict: string, figures: HealthFigures): string {
  const closes = figures.idle_closed_connections;
  return closes === undefined ? verdict : `${verdict}; ${idleCloseNote(closes)}`;
}

/** The status rules of the module comment. */
function statusOf(figures: HealthFigures, j: Judged): HealthStatus {
  const late = j.lagMs > j.limits.send_lag_p99;
  const loaded = j.elu > HEALTH_LIMITS.busyUtilization;
  if (j.elu > HEALTH_LIMITS.saturatedUtilization || (late && loaded)) return 'saturated';
  if (late) return 'late';
  if (loaded || figures.event_loop_delay_ms.p99 > j.limits.loop_delay_p99) return 'busy';
  return 'ok';
}

function verdictOf(
  status: HealthStatus,
  cause: LateCause | undefined,
  figures: HealthFigures,
  j: Judged,
): string {
  const figuresText = describe(figures, j);
  if (status === 'saturated')
    return `saturated: the load generator, not the server, was the bottleneck; timings are inflated — ${remedy(figures)} (${figuresText})`;
  if (cause !== undefined) return `late (${cause}): ${lateReason(figures, cause, j)} (${figuresText})`;
  if (status === 'busy')
    return `busy: sends were on time, but timestamps may be late by up to the loop delay (${figuresText})`;
  const floorMs = figures.wake_floor_ms.p99;
  if (floorMs <= HEALTH_LIMITS.sendLagMarginMs)
    return `ok: the client kept its schedule with headroom (${figuresText})`;
  return `ok: the client added no lateness of its own, but this machine woke an idle process up to ${floorMs} ms late at start-up (wake floor p99), and any timestamp can carry that much (${figuresText})`;
}

/**
 * Why sends were late on a client that was not loaded: `bursts` when at least half the late requests
 * were late from their burst; else `pauses` when the loop stopped at least as long as the lateness
 * (loop delay max ≥ judged send lag); else `waits`.
 */
function lateCause(figures: HealthFigures, lagMs: number): LateCause {
  const sends = figures.late_sends;
  if (sends !== null && sends.count > 0 && 2 * sends.in_bursts >= sends.count) return 'bursts';
  if (sends !== null && sends.count > 0 && 2 * sends.on_connections >= sends.count) return 'connections';
  return figures.event_loop_delay_ms.max >= lagMs ? 'pauses' : 'waits';
}

/** What to do about a saturated client: a quieter machine when it was starved, else less load or more threads. */
function remedy(figures: HealthFigures): string {
  const note = starved(figures);
  return note === null
    ? 'lower the load, add --workers, or use a bigger client machine'
    : `${note}; rerun on a quieter machine`;
}

/**
 * A note when the main thread ran on a core for less than half the time its event loop was busy: the
 * process waited for a CPU that other processes held. Null otherwise (or without thread CPU).
 */
function starved(figures: HealthFigures): string | null {
  const cpu = figures.main_thread_cpu_percent;
  if (cpu === null || cpu / 100 >= figures.event_loop_utilization / 2) return null;
  const busyPct = Math.round(figures.event_loop_utilization * 100);
  return `its event loop was busy ${busyPct} % of the wall time, but its main thread ran on a core for only ${cpu} % of it: other processes on this machine took the CPU`;
}

/**
 * What stopped the event loop: the longest GC pause when it was at least half the longest loop
 * delay, else a starved main thread, else the two candidates.
 */
function pauseCause(figures: HealthFigures): string {
  const gc = figures.gc;
  if (gc.max_pause_ms >= figures.event_loop_delay_ms.max / 2)
    return `the longest garbage-collection pause was ${gc.max_pause_ms} ms; ${gc.count} collections, ${gc.pause_ms_per_second} ms of pause per second`;
  return (
    starved(figures) ??
    `not garbage collection (${gc.count} collections of at most ${gc.max_pause_ms} ms): a long task in this process, or another process on this machine's cores`
  );
}

/**
 * What a `late` verdict says: how many were late, why, that the client was not saturated, and, when
 * the loop delay was over its limit, that timestamps carry it.
 */
function lateReason(figures: HealthFigures, cause: LateCause, j: Judged): string {
  const sends = figures.late_sends;
  const late = sends === null ? '' : `${sends.count} requests later than ${sends.limit_ms} ms; `;
  const why = {
    bursts: `${sends?.in_bursts} of them waited behind requests scheduled within 1 ms of them (largest burst ${sends?.largest_burst}), which go out one after another`,
    connections: `${sends?.on_connections} of them spent most of it waiting for a new connection to be opened (connection_wait, connect_time), not in the client`,
    pauses: `the event loop stopped for up to ${figures.event_loop_delay_ms.max} ms (${pauseCause(figures)})`,
    waits:
      'neither bursts, connections nor event-loop pauses explain it: the requests began late while the event loop was not seen stopping',
  }[cause];
  const loopMs = figures.event_loop_delay_ms.p99;
  const held =
    loopMs > j.limits.loop_delay_p99
      ? `; timestamps may be late by up to the loop delay (p99 ${loopMs} ms)`
      : '';
  return `${late}${why}; the client was not saturated, and each request's lateness is its schedule_lag${held}`;
}

/** The figures behind a verdict, with the limits they were judged against. */
function describe(figures: HealthFigures, j: Judged): string {
  const lag = figures.send_lag_ms === null ? 'no schedule' : `send lag ${j.lagLabel} ${j.lagMs} ms`;
  return [
    `${lag}, limit ${j.limits.send_lag_p99} ms = wake floor p99 ${figures.wake_floor_ms.p99} + ${HEALTH_LIMITS.sendLagMarginMs}`,
    `loop delay p99 ${figures.event_loop_delay_ms.p99} ms, limit ${j.limits.loop_delay_p99} ms = idle ${figures.idle_loop_delay_ms.p99} + ${HEALTH_LIMITS.loopDelayMarginMs}`,
    `busiest loop ELU ${j.elu}`,
  ].join('; ');
}
