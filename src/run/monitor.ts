/**
 * Self-monitoring of the load generator during the profiling phase: is the client, not the server,
 * the bottleneck? Timestamps are taken on the client's event loop, so a busy loop inflates measured
 * TTFT/ITL and delays sends (at ELU ≈ 1 sends lag by hundreds of ms: the 5,000 req/s rows of bench/README.md).
 *
 * Sampled: main-thread event-loop delay (`monitorEventLoopDelay`, 2 ms resolution — a cheap native
 * timer), main-thread event-loop utilization, process CPU (all threads) and, with the worker pool,
 * each worker's ELU and thread CPU. Send lag (request start − intended send time) is the run's
 * `schedule_lag` values, handed over at stop. Cost: one native histogram timer; nothing on the
 * request path.
 */
import { readFileSync } from 'node:fs';
import { type EventLoopUtilization, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { WorkerThreadStats } from '../client/worker-pool.js';
import { threadCpuSeconds } from '../client/worker-protocol.js';
import { percentileSorted } from '../metrics/stats.js';

/** Percentiles in ms. */
export interface MsStats {
  p50: number;
  /** Present for send lag. */
  p90?: number;
  p99: number;
  max: number;
  /** Number of samples (send lag only). */
  count?: number;
}

/** `client_health` section of the summary. Ratios 0–1; percentages of one core (can exceed 100). */
export interface ClientHealth {
  event_loop_delay_ms: MsStats;
  /** Main-thread event-loop utilization over the phase, 0–1. */
  event_loop_utilization: number;
  /** Process CPU (every thread: main, workers, libuv pool) / wall time × 100. */
  cpu_percent: number;
  /** Main thread alone, where /proc/thread-self exists. */
  main_thread_cpu_percent: number | null;
  /** Per worker thread, when the worker pool ran. */
  workers?: Array<{ event_loop_utilization: number; cpu_percent: number | null }>;
  /** Request start − intended send time over scheduled requests; null without a schedule. */
  send_lag_ms: MsStats | null;
  /** True when the figures say the client limited the run. */
  saturated: boolean;
  /** One plain sentence, e.g. "client saturated: …" or "ok: …". */
  verdict: string;
}

/** What the monitor reads from the phase's client (the worker pool provides it). */
export interface MonitoredClient {
  threadStats?(): WorkerThreadStats[];
}

/** A running monitor. */
export interface ClientMonitor {
  /** Stops sampling and returns the health verdict; `lagsMs` are the run's `schedule_lag` values. */
  stop(lagsMs: readonly number[]): ClientHealth;
}

/** Thresholds of the verdict, ms or 0–1. Loop delay is the scheduler's own lateness. */
export const SATURATION = {
  loopDelayP99Ms: 20,
  sendLagP99Ms: 10,
  utilization: 0.9,
  busyLoopDelayP99Ms: 5,
  busySendLagP99Ms: 2,
  busyUtilization: 0.7,
} as const;

const readProc = (path: string): string => readFileSync(path, 'utf8');

/** Starts sampling now. */
export function startClientMonitor(client: MonitoredClient = {}): ClientMonitor {
  const loop = monitorEventLoopDelay({ resolution: 2 });
  loop.enable();
  const elu0: EventLoopUtilization = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const mainCpu0 = threadCpuSeconds(readProc);
  const t0Ms = performance.now();
  return {
    stop: (lagsMs) => {
      loop.disable();
      const wallS = Math.max(1e-9, (performance.now() - t0Ms) / 1000);
      const cpu = process.cpuUsage(cpu0);
      const mainCpu1 = threadCpuSeconds(readProc);
      const workers = client.threadStats?.().map((w) => ({
        event_loop_utilization: round3(w.eventLoopUtilization),
        cpu_percent: w.cpuSeconds === null ? null : round1((100 * w.cpuSeconds) / wallS),
      }));
      const delay = {
        p50: round3(loop.percentile(50) / 1e6),
        p99: round3(loop.percentile(99) / 1e6),
        max: round3(loop.max / 1e6),
      };
      return judge({
        event_loop_delay_ms: loop.count === 0 ? { p50: 0, p99: 0, max: 0 } : delay,
        event_loop_utilization: round3(performance.eventLoopUtilization(elu0).utilization),
        cpu_percent: round1(((cpu.user + cpu.system) / 1e6 / wallS) * 100),
        main_thread_cpu_percent:
          mainCpu0 === null || mainCpu1 === null ? null : round1(((mainCpu1 - mainCpu0) / wallS) * 100),
        ...(workers === undefined ? {} : { workers }),
        send_lag_ms: sendLag(lagsMs),
      });
    },
  };
}

/**
 * Send-lag percentiles (ms, numpy-linear as every metric: {@link percentileSorted}) of the
 * `schedule_lag` values (requests without a schedule have none); null when there are none.
 */
export function sendLag(lagsMs: readonly number[]): MsStats | null {
  if (lagsMs.length === 0) return null;
  const lags = Float64Array.from(lagsMs).sort();
  return {
    p50: round3(percentileSorted(lags, 50)),
    p90: round3(percentileSorted(lags, 90)),
    p99: round3(percentileSorted(lags, 99)),
    max: round3(lags[lags.length - 1] as number),
    count: lags.length,
  };
}

/** Adds `saturated` and `verdict` to the measured figures (thresholds in {@link SATURATION}). */
export function judge(health: Omit<ClientHealth, 'saturated' | 'verdict'>): ClientHealth {
  const delayP99 = health.event_loop_delay_ms.p99;
  // With fewer than 100 scheduled requests p99 is the single worst one (often the first, cold
  // request); judge small runs on p90 so one outlier does not condemn the client.
  const lag = health.send_lag_ms;
  const lagP99 = lag === null ? 0 : (lag.count ?? 0) >= 100 ? lag.p99 : (lag.p90 ?? lag.p99);
  const elu = Math.max(
    health.event_loop_utilization,
    ...(health.workers ?? []).map((w) => w.event_loop_utilization),
  );
  const lagLabel = lag !== null && (lag.count ?? 0) < 100 ? 'p90' : 'p99';
  const figures = `loop delay p99 ${delayP99} ms, send lag ${lagLabel} ${lagP99} ms, busiest loop ELU ${elu}`;
  if (
    delayP99 > SATURATION.loopDelayP99Ms ||
    lagP99 > SATURATION.sendLagP99Ms ||
    elu > SATURATION.utilization
  ) {
    const verdict = `client saturated (${figures}): the load generator, not the server, was the bottleneck; timings are inflated — lower the load, add --workers, or use a bigger client machine`;
    return { ...health, saturated: true, verdict };
  }
  if (
    delayP99 > SATURATION.busyLoopDelayP99Ms ||
    lagP99 > SATURATION.busySendLagP99Ms ||
    elu > SATURATION.busyUtilization
  ) {
    const verdict = `client busy (${figures}): timestamps may be late by up to the loop delay`;
    return { ...health, saturated: false, verdict };
  }
  return { ...health, saturated: false, verdict: `ok: client had headroom (${figures})` };
}

/** The console line of a health verdict. */
export function clientHealthLine(health: ClientHealth): string {
  return `Client health: ${health.verdict}; CPU ${health.cpu_percent} % of one core`;
}

function round3(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 1000) / 1000 : 0;
}

function round1(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 10) / 10 : 0;
}
