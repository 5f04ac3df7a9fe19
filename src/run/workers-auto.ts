/**
 * `--workers auto`: how many client worker threads a run sends through, decided once before it
 * starts from what is known then, and stated (console line and the summary's `client_workers`).
 *
 * - **Demand**: the asked rate (`--request-rate`, a series' peak qps, `--user-centric-rate`), a
 *   fixed schedule's busiest second (of its first seconds, as the connection pre-open reads it:
 *   run/prewarm.ts), or the streams held open (`--concurrency`). A streamed trace is not read
 *   ahead, so its rate is unknown: one thread, saying so.
 * - **Capacity of one sending thread**: this machine's calibration (`tokenload calibrate`:
 *   health/calibration-file.ts) divided by the workers it ran with, when a schema-2 file exists;
 *   else {@link DEFAULT_THREAD_RATE_PER_S} req/s and {@link DEFAULT_THREAD_STREAMS} streams.
 * - **Threads**: the demand over that capacity, rounded up; 1 (single-process, no worker threads)
 *   when one thread holds the load, when a prefill gate needs the first token on the main thread,
 *   or when the machine has no core to spare (one is left for the main thread, which schedules:
 *   never more than cores − 1 workers, so a 1–2 core machine always runs single-process).
 */
import { availableParallelism } from 'node:os';
import type { RunPlan } from '../config/plan.js';
import type { Dataset } from '../dataset/types.js';
import {
  defaultCalibrationPath,
  readCalibration,
  type StoredCalibration,
} from '../health/calibration-file.js';
import type { MachineOverride } from '../util/run-env.js';
import { busiestSecond, PREWARM_LOOKAHEAD_S } from './prewarm.js';

/**
 * Requests/s one thread is assumed to send on time without a calibration: at about 0.8 ms of client
 * CPU per streamed request (issue #27, the reference 2-core machine) one thread is busy 70 % of the
 * time (the client-health `busy` bound, health-judge.ts) at about 875 req/s; rounded down.
 */
export const DEFAULT_THREAD_RATE_PER_S = 800;

/**
 * Concurrent streams one thread is assumed to hold without a calibration: above about 1,000 streams
 * one event loop's timestamps lag by tens of ms (client/worker-pool.ts, bench/README.md).
 */
export const DEFAULT_THREAD_STREAMS = 1000;

/** The summary's `client_workers` section: what `--workers auto` chose and why. */
export interface WorkersChoice {
  asked: 'auto';
  /** Sending threads: 1 = single-process (no worker threads), else worker threads. */
  workers: number;
  /** Cores this process may use (`os.availableParallelism()`). */
  cores: number;
  /** The load one thread would have to carry: a rate (req/s) or streams; null when unknown. */
  demand: { value: number; unit: 'req/s' | 'streams'; source: string } | null;
  /** What one sending thread is taken to carry, in the demand's unit, and where that figure comes from. */
  per_thread: { value: number; source: string } | null;
  /** The choice in one sentence, as the console states it. */
  basis: string;
}

/** What {@link chooseWorkers} decides from. */
export interface WorkersFacts {
  cores: number;
  /** The run's load, or null when its size is not known before it runs. */
  demand: WorkersChoice['demand'];
  per_thread: WorkersChoice['per_thread'];
  /** Why the run must stay single-process whatever its load; null when it need not. */
  singleOnly: string | null;
}

/** The decision of the module comment, from facts gathered elsewhere. */
export function chooseWorkers(facts: WorkersFacts): WorkersChoice {
  const { cores, demand, per_thread } = facts;
  const base = { asked: 'auto' as const, cores, demand, per_thread };
  const single = (why: string): WorkersChoice => ({
    ...base,
    workers: 1,
    basis: `1 (single-process): ${why}`,
  });
  if (facts.singleOnly !== null) return single(facts.singleOnly);
  if (demand === null || per_thread === null)
    return single(
      'the rate of a streamed trace (not read ahead) is not known before the run; pass --workers N to spread its sends',
    );
  const needed = Math.max(1, Math.ceil(demand.value / Math.max(1e-9, per_thread.value)));
  const load = `${demand.value} ${demand.unit} (${demand.source}) over ${per_thread.value} ${demand.unit} per thread (${per_thread.source})`;
  if (needed <= 1) return single(`one thread carries ${load}`);
  const spare = Math.max(0, cores - 1);
  if (spare < 2)
    return single(
      `${load} needs ${needed} threads, but ${cores} ${cores === 1 ? 'core leaves' : 'cores leave'} none to spare beside the main thread; expect a saturated client`,
    );
  const workers = Math.min(needed, spare);
  const capped =
    workers < needed
      ? `, capped at ${spare} (cores − 1, one left for the main thread); expect a saturated client`
      : '';
  return { ...base, workers, basis: `${workers} worker threads: ${load} needs ${needed}${capped}` };
}

/** The load `--workers auto` sizes for (module comment); null when unknown before the run. */
export function demandOf(
  config: Pick<RunPlan, 'load'>,
  dataset: Dataset,
  streamed: boolean,
): WorkersChoice['demand'] {
  const { load } = config;
  switch (load.kind) {
    case 'request_rate': {
      const series = load.rate.series;
      if (series === undefined) return { value: load.rate.ratePerS, unit: 'req/s', source: '--request-rate' };
      const peak = Math.max(...series.points.map((p) => p.qps));
      return { value: peak, unit: 'req/s', source: 'the rate series’ peak qps' };
    }
    case 'user_centric':
      return { value: load.ratePerS, unit: 'req/s', source: '--user-centric-rate' };
    case 'fixed_schedule':
      return streamed
        ? null
        : {
            value: busiestSecond(dataset),
            unit: 'req/s',
            source: `the busiest second of the schedule's first ${PREWARM_LOOKAHEAD_S} s`,
          };
    case 'concurrency':
      return { value: load.concurrency, unit: 'streams', source: '--concurrency' };
  }
}

/**
 * One sending thread's capacity in `unit`: a schema-2 calibration's ceiling over the workers it ran
 * with (a ceiling below its lowest step: that step), else the defaults.
 */
export function perThreadOf(
  calibration: StoredCalibration | null,
  unit: 'req/s' | 'streams',
): NonNullable<WorkersChoice['per_thread']> {
  const fallback =
    unit === 'req/s'
      ? { value: DEFAULT_THREAD_RATE_PER_S, source: 'default, no calibration' }
      : { value: DEFAULT_THREAD_STREAMS, source: 'default, no calibration' };
  if (calibration === null || calibration.schemaVersion < 2) return fallback;
  const ceiling = unit === 'req/s' ? calibration.maxRequestRatePerS : (calibration.concurrentStreams ?? null);
  const steps = unit === 'req/s' ? calibration.rateSteps : calibration.streamSteps;
  const measured = ceiling ?? steps?.[0]?.target;
  if (measured === undefined) return fallback;
  const threads = calibration.workers ?? 1;
  const below = ceiling === null ? 'below ' : '';
  const over = threads > 1 ? ` over its ${threads} workers` : '';
  return {
    value: Math.round((measured / threads) * 10) / 10,
    source: `tokenload calibrate, ${calibration.measuredAt}: ${below}${measured} ${unit}${over}`,
  };
}

/**
 * Resolves `--workers`: a number is kept (null: nothing was chosen), with a warning when the
 * sending threads and the main thread outnumber the cores; `auto` is decided here, on
 * `machine.cores` (default `os.availableParallelism()`) and the calibration at
 * `machine.calibrationPath` (default: tokenload calibrate's file), read only when the demand is known.
 * A calibration file that cannot be used is skipped, `warn` saying why.
 */
export async function resolveWorkers(
  config: Pick<RunPlan, 'workers' | 'load' | 'prefill' | 'warmup'>,
  dataset: Dataset,
  streamed: boolean,
  machine: MachineOverride,
  warn: (message: string) => void,
): Promise<WorkersChoice | null> {
  const cores = machine.cores ?? availableParallelism();
  if (config.workers !== 'auto') {
    if (config.workers !== undefined && config.workers > 1 && config.workers >= cores)
      warn(
        `--workers ${config.workers}: ${config.workers} sending threads and the main thread share ${cores} ${cores === 1 ? 'core' : 'cores'}, so they take the CPU from each other; the wake-up floor measured at start-up, and every send, carry that (--workers auto never goes above cores − 1)`,
      );
    return null;
  }
  const gated = config.prefill !== null || (config.warmup?.prefill ?? null) !== null;
  const demand = demandOf(config, dataset, streamed);
  const calibration =
    demand === null || gated
      ? null
      : await readCalibration(machine.calibrationPath ?? defaultCalibrationPath(), warn);
  return chooseWorkers({
    cores,
    demand,
    per_thread: demand === null ? null : perThreadOf(calibration, demand.unit),
    singleOnly: gated
      ? '--prefill-concurrency releases its slot on the first token, which only the main thread sees'
      : null,
  });
}

/** The line the console states the choice in. */
export function workersLine(choice: WorkersChoice): string {
  return `--workers auto: ${choice.basis} (${choice.cores} ${choice.cores === 1 ? 'core' : 'cores'})`;
}
