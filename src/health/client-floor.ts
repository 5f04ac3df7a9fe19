/**
 * The floor a run's client health is judged against, measured just before the profiling phase's
 * first send: the process sleeps to {@link FLOOR_WAKEUPS} targets 1 ms apart on the run's clock
 * ({@link wakeLateness}, as `npm run bench:wake` does) with nothing else to do, and records how late
 * each wake-up was, while the event-loop delay histogram the monitor uses samples the same window.
 * What an idle client sees on this machine at this moment (a halting vCPU, other processes on the
 * cores) is the floor; only lateness above it is the client's own. With worker threads sending,
 * the same probe runs on each of them at once (the sends run there), and the worst thread is the floor.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { FloorProbe, ThreadFloor } from '../client/worker-protocol.js';
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
  /**
   * With worker threads sending: the threads probed at once, e.g. `main thread and 2 worker
   * threads`; each figure above is then the thread with the highest p99. Absent: the main thread.
   */
  floor_threads?: string;
}

/** The worker threads that send, when they do: the floor is probed on them too (client/worker-pool.ts). */
export interface FloorThreads {
  probeFloor(probe: FloorProbe): Promise<ThreadFloor[]>;
}

/** Where the sends run, when not (only) on the main thread: {@link measureClientFloor}'s third argument. */
export interface SendingThreads {
  client: FloorThreads;
  /** `--timing-precision`: the workers' probe sleeps on a clock of the same precision. */
  precision: 'timer' | 'spin';
}

/**
 * Measures the floor (about {@link FLOOR_WAKEUPS} ms) on the main thread, and at the same time on
 * every worker thread of `threads` when the sends run there: each figure is then the thread with
 * the highest p99. An abort of `signal` ends the main thread's probe early; with no wake-up measured
 * the wake figures are 0 with `count` 0. On a virtual clock lateness is 0.
 */
export async function measureClientFloor(
  clock: Clock,
  signal?: AbortSignal,
  threads?: SendingThreads,
): Promise<ClientFloor> {
  const probe: FloorProbe = {
    count: FLOOR_WAKEUPS,
    spacingNs: 1e6,
    precision: threads?.precision ?? 'timer',
    loopResolutionMs: LOOP_DELAY_RESOLUTION_MS,
  };
  const workers = threads === undefined ? Promise.resolve([]) : threads.client.probeFloor(probe);
  const loop = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loop.enable();
  const late = await wakeLateness(clock, { ...probe, ...(signal === undefined ? {} : { signal }) });
  loop.disable();
  const main: ClientFloor = { wake_floor_ms: latenessStats(late), idle_loop_delay_ms: loopDelayStats(loop) };
  return threads === undefined ? main : worstOf(main, await workers);
}

/** The main thread's floor and the workers': each figure from the thread with the highest p99. */
function worstOf(main: ClientFloor, workers: readonly ThreadFloor[]): ClientFloor {
  let wake = main.wake_floor_ms;
  let loop = main.idle_loop_delay_ms;
  for (const w of workers) {
    const wWake = latenessStats(w.lateMs);
    const d = w.loopDelayNs;
    const wLoop = loopDelayStats({
      count: d.count,
      max: d.max,
      percentile: (p) => (p === 50 ? d.p50 : d.p99),
    });
    if (wWake.p99 > wake.p99) wake = wWake;
    if (wLoop.p99 > loop.p99) loop = wLoop;
  }
  const n = workers.length;
  return {
    wake_floor_ms: wake,
    idle_loop_delay_ms: loop,
    floor_threads: `main thread and ${n} worker ${n === 1 ? 'thread' : 'threads'}`,
  };
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
