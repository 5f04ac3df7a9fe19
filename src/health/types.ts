/**
 * The client-health verdict's shapes (the summary's `client_health` section), the leaf of the
 * health folder: the monitor measures, the judge decides, and both read these.
 */
import type { ClientFloor, MsStats } from './client-floor.js';
import type { GcFigures } from './gc-watch.js';
import type { IdleClosedConnections } from './idle-closes.js';
import type { LateSends } from './send-log.js';

/** The verdict's status; see `judge` in ./health-judge.ts for each one's rule. */
export type HealthStatus = 'ok' | 'busy' | 'late' | 'saturated';

/** Why sends were late on a client that was not saturated (status `late`). */
export type LateCause = 'bursts' | 'connections' | 'pauses' | 'waits';

/**
 * `client_health` section of the summary. Ratios 0–1; percentages of one core (can exceed 100);
 * times in ms.
 */
export interface ClientHealth extends ClientFloor {
  /** Main-thread event-loop delay over the phase (2 ms histogram: an idle loop reads about 2). */
  event_loop_delay_ms: MsStats;
  /** Main-thread event-loop utilization over the phase, 0–1. */
  event_loop_utilization: number;
  /** Process CPU (every thread: main, workers, libuv pool) / wall time × 100. */
  cpu_percent: number;
  /** Main thread alone, where /proc/thread-self exists. */
  main_thread_cpu_percent: number | null;
  /** Per worker thread, when the worker pool ran. */
  workers?: Array<{ event_loop_utilization: number; cpu_percent: number | null }>;
  /** Main-thread garbage collections over the phase: count, pause per second, longest pause. */
  gc: GcFigures;
  /** `schedule_lag` percentiles over scheduled requests; null without a schedule. */
  send_lag_ms: MsStats | null;
  /** Requests later than the send-lag limit and how many were bursts; null without a schedule. */
  late_sends: LateSends | null;
  /**
   * Scheduled requests whose connection had closed while idle (a keep-alive timeout), and how many
   * of them waited for a new one; absent when none. Their wait is not in `send_lag_ms`.
   */
  idle_closed_connections?: IdleClosedConnections;
  /** What the run was judged against: wake floor p99 + margin, idle loop delay p99 + margin. */
  limits_ms: { send_lag_p99: number; loop_delay_p99: number };
  status: HealthStatus;
  /** Present with status `late`. */
  late_cause?: LateCause;
  /** True for status `saturated`: the figures say the client limited the run. */
  saturated: boolean;
  /** One plain sentence starting with the status, e.g. "late (bursts): …" or "ok: …". */
  verdict: string;
}

/** The measured figures {@link judge} reads. */
export type HealthFigures = Omit<
  ClientHealth,
  'limits_ms' | 'status' | 'late_cause' | 'saturated' | 'verdict'
>;
