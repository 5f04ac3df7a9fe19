/**
 * Self-monitoring of the load generator during the profiling phase: is the client, not the server,
 * the bottleneck? Timestamps are taken on the client's event loop, so a busy loop inflates measured
 * TTFT/ITL and delays sends (at ELU ≈ 1 sends lag by hundreds of ms: the 5,000 req/s rows of bench/README.md).
 *
 * Sampled: main-thread event-loop delay (`monitorEventLoopDelay`, 2 ms resolution — a cheap native
 * timer), main-thread event-loop utilization, process CPU (all threads) and, with the worker pool,
 * each worker's ELU and thread CPU, and the main thread's garbage-collection pauses (gc-watch.ts). Send lag is the run's `schedule_lag` values, handed over at stop,
 * with the {@link SendLog} that tells bursts apart. Everything is judged ({@link judge}) against the
 * floor measured just before the phase ({@link measureClientFloor}). Cost: one native histogram
 * timer and two numbers per scheduled request.
 */
import { readFileSync } from 'node:fs';
import { type EventLoopUtilization, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { WorkerThreadStats } from '../client/worker-pool.js';
import { threadCpuSeconds } from '../client/worker-protocol.js';
import { tailStats } from '../metrics/stats.js';
import {
  type ClientFloor,
  LOOP_DELAY_RESOLUTION_MS,
  loopDelayStats,
  type MsStats,
  round3,
} from './client-floor.js';
import { startGcWatch } from './gc-watch.js';
import { healthLimits, judge } from './health-judge.js';
import type { IdleClosedConnections } from './idle-closes.js';
import type { SendLog } from './send-log.js';
import type { ClientHealth } from './types.js';

/** What the monitor reads from the phase's client (the worker pool provides it). */
export interface MonitoredClient {
  threadStats?(): WorkerThreadStats[];
}

/** A running monitor. */
export interface ClientMonitor {
  /**
   * Stops sampling and returns the health verdict; `lagsMs` are the run's send lags
   * (`sends.clientLagsMs()`), `sends` the same requests' scheduled times (for bursts).
   */
  stop(lagsMs: readonly number[], sends: SendLog): ClientHealth;
}

const readProc = (path: string): string => readFileSync(path, 'utf8');

/** Starts sampling now; the verdict will be judged against `floor`. */
export function startClientMonitor(floor: ClientFloor, client: MonitoredClient = {}): ClientMonitor {
  const loop = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  loop.enable();
  const elu0: EventLoopUtilization = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const mainCpu0 = threadCpuSeconds(readProc);
  const gc = startGcWatch();
  const t0Ms = performance.now();
  return {
    stop: (lagsMs, sends) => {
      loop.disable();
      const gcFigures = gc.stop();
      const wallS = Math.max(1e-9, (performance.now() - t0Ms) / 1000);
      const cpu = process.cpuUsage(cpu0);
      const mainCpu1 = threadCpuSeconds(readProc);
      const workers = client.threadStats?.().map((w) => ({
        event_loop_utilization: round3(w.eventLoopUtilization),
        cpu_percent: w.cpuSeconds === null ? null : round1((100 * w.cpuSeconds) / wallS),
      }));
      return judge({
        ...floor,
        event_loop_delay_ms: loopDelayStats(loop),
        event_loop_utilization: round3(performance.eventLoopUtilization(elu0).utilization),
        cpu_percent: round1(((cpu.user + cpu.system) / 1e6 / wallS) * 100),
        main_thread_cpu_percent:
          mainCpu0 === null || mainCpu1 === null ? null : round1(((mainCpu1 - mainCpu0) / wallS) * 100),
        ...(workers === undefined ? {} : { workers }),
        gc: gcFigures,
        send_lag_ms: sendLag(lagsMs),
        late_sends: sends.lateSends(healthLimits(floor).send_lag_p99, lagsMs),
        ...idleClosedOf(sends),
      });
    },
  };
}

/**
 * Send-lag percentiles (ms, numpy-linear as every metric: `tailStats` in metrics/stats.ts) of the
 * `schedule_lag` values (requests without a schedule have none); null when there are none.
 */
export function sendLag(lagsMs: readonly number[]): MsStats | null {
  return lagsMs.length === 0 ? null : { ...tailStats(lagsMs), count: lagsMs.length };
}

function idleClosedOf(sends: SendLog): { idle_closed_connections?: IdleClosedConnections } {
  const section = sends.idleClosed();
  return section === null ? {} : { idle_closed_connections: section };
}

/** The console line of a health verdict. */
export function clientHealthLine(health: Pick<ClientHealth, 'verdict' | 'cpu_percent'>): string {
  return `Client health: ${health.verdict}; CPU ${health.cpu_percent} % of one core`;
}

function round1(x: number): number {
  return Number.isFinite(x) ? Math.round(x * 10) / 10 : 0;
}
