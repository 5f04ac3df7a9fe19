/**
 * The floor a run's client health is judged against, measured just before the profiling phase's
 * first send: the process sleeps to {@link FLOOR_WAKEUPS} targets 1 ms apart on the run's clock
 * ({@link wakeLateness}, as `npm run bench:wake` does) with nothing else to do, and records how late
 * each wake-up was, while the event-loop delay histogram the monitor uses samples the same window.
 * What an idle client sees on this machine at this moment (a halting vCPU, other processes on the
 * cores) is the floor; only lateness above it is the client's own.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { percentileSorted } from '../metrics/stats.js';
import type { Clock } from '../timing/clock.js';
import { wakeLateness } from '../timing/wake-floor.js';

/** Wake-ups of the floor probe, 1 ms apart: it takes about this many ms. */
export const FLOOR_WAKEUPS = 250;

/** Event-loop delay histogram resolution, ms (the monitor's and the floor probe's). */
export const LOOP_DELAY_RESOLUTION_MS = 2;

/** Percentiles in ms. */
export interface MsStats {
  p50: number;
  /** Present for send lag. */
  p90?: number;
  p99: number;
  max: number;
  /** Number of samples (send lag and wake-ups). */
  count?: number;
}

/** The floor of one run, ms. */
export interface ClientFloor {
  /** Lateness of the probe's wake-ups (wake-up − target) on the run's clock. */
  wake_floor_ms: MsStats;
  /** Event-loop delay over the probe's window (same histogram and resolution as `event_loop_delay_ms`). */
  idle_loop_delay_ms: MsStats;
}

/**
 * Measures the floor (about {@link FLOOR_WAKEUPS} ms). An abort of `signal` ends it early; with no
 * wake-up measured the wake figures are 0 with `count` 0. On a virtual clock lateness is 0.
 */
export async function measureClientFloor(clock: Clock, signal?: AbortSignal): Promise<ClientFloor> {
  const loop = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loop.enable();
  const late = await wakeLateness(clock, {
    count: FLOOR_WAKEUPS,
    spacingNs: 1e6,
    ...(signal === undefined ? {} : { signal }),
  });
  loop.disable();
  return { wake_floor_ms: latenessStats(late), idle_loop_delay_ms: loopDelayStats(loop) };
}

/** p50/p99/max/count of wake-up lateness (numpy-linear percentiles, as every metric), ms. */
export function latenessStats(lateMs: Float64Array): MsStats {
  if (lateMs.length === 0) return { p50: 0, p99: 0, max: 0, count: 0 };
  const sorted = Float64Array.from(lateMs).sort();
  return {
    p50: round3(percentileSorted(sorted, 50)),
    p99: round3(percentileSorted(sorted, 99)),
    max: round3(sorted[sorted.length - 1] as number),
    count: sorted.length,
  };
}

/** p50/p99/max of an event-loop delay histogram, ms; zeros when it has no sample. */
export function loopDelayStats(loop: { count: number; max: number; percentile(p: number): number }): MsStats {
  if (loop.count === 0) return { p50: 0, p99: 0, max: 0 };
  return {
    p50: round3(loop.percentile(50) / 1e6),
    p99: round3(loop.percentile(99) / 1e6),
    max: round3(loop.max / 1e6),
  };
}

/** Rounded to µs (figures in ms). */
export function round3(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 1000) / 1000 : 0;
}
