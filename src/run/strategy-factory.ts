/**
 * Turns the configuration into the load of a phase: which strategy (picked by name from the registry
 * in `timing/registry.ts`), built from which {@link LoadPlan}, and the phase's stop conditions. A
 * fixed schedule for timestamped traces (unless `--no-fixed-schedule`), a request rate when
 * `--request-rate` is set, closed-loop concurrency otherwise (default 1, as AIPerf).
 */

import type { LoadSpec, PrefillSpec, RateSpec, RunPlan, ScheduleZeroSpec } from '../config/plan.js';
import { createConversationSampler } from '../dataset/sampling.js';
import type { Dataset, StreamedTurn } from '../dataset/types.js';
import { shardArrivals } from '../shard/shard-run.js';
import { earliestFirstTurnMs, type ScheduleZero } from '../timing/fixed-schedule.js';
import { createStrategy, type LoadPlan, type RatePlan, type SchedulePlan } from '../timing/registry.js';
import { type SessionSource, type StopConditions, samplerSource } from '../timing/session-source.js';
import type { LoadStrategy } from '../timing/types.js';

/** Phase-specific load and stop conditions. */
export interface PhaseLimits {
  stop: StopConditions;
  /** True when the dataset is replayed once (trace files without count/duration). */
  onePass: boolean;
  /** How the phase drives load: the plan's for profiling, the warmup's own (`--warmup-*`) for warmup. */
  load: LoadSpec;
  /** The phase's prefill gate (`--prefill-concurrency`); null: none. */
  prefill: PrefillSpec | null;
  /**
   * Sessions to start, then end when they complete (`--conversation-num`, `--num-warmup-sessions`);
   * absent: no such limit.
   */
  sessions?: number;
  /**
   * Seconds requests in flight at the duration cut-off get before they are cancelled (Infinity: no
   * limit); absent: `--benchmark-grace-period`.
   */
  cutoffGraceSeconds?: number;
  /**
   * A folder the phase writes its records and request bodies to, through the profiling phase's own
   * writers (the client warm-up's throwaway folder: it warms the export path too); absent: the
   * artifact folder for profiling, nothing for a warmup phase.
   */
  writesTo?: string;
}

/** Stop conditions of the profiling phase (the plan's stop; a synthetic default count stops too). */
export function profilingLimits(
  plan: Pick<RunPlan, 'stop' | 'input' | 'load' | 'prefill'>,
  dataset: Dataset,
): PhaseLimits {
  const { requestCount, durationNs, sessionCount, defaulted } = plan.stop;
  const phaseLoad = { load: plan.load, prefill: plan.prefill };
  if (defaulted && plan.input.kind === 'file' && requestCount === undefined)
    return { stop: {}, onePass: true, ...phaseLoad };
  return {
    ...phaseLoad,
    stop: {
      ...(requestCount === undefined
        ? {}
        : { requestCount: Math.min(requestCount, Number.MAX_SAFE_INTEGER) }),
      ...(durationNs === undefined ? {} : { durationNs }),
    },
    onePass: defaulted && dataset.conversations.length === 0,
    ...(sessionCount === undefined ? {} : { sessions: sessionCount }),
  };
}

/** Load and stop conditions of the warmup phase; null when no warmup was asked for. */
export function warmupLimits(plan: Pick<RunPlan, 'warmup'>): PhaseLimits | null {
  const w = plan.warmup;
  if (w === null) return null;
  return {
    stop: {
      ...(w.requestCount === undefined ? {} : { requestCount: w.requestCount }),
      ...(w.durationNs === undefined ? {} : { durationNs: w.durationNs }),
    },
    onePass: false,
    load: w.load,
    prefill: w.prefill,
    ...(w.sessions === undefined ? {} : { sessions: w.sessions }),
    cutoffGraceSeconds: w.graceSeconds,
  };
}

/**
 * One line on a phase's load, for the log and the summary's `load` section: the strategy's own
 * description, plus its prefill gate (`--prefill-concurrency`) when it has one.
 */
export function describePhase(strategy: LoadStrategy, limits: Pick<PhaseLimits, 'prefill'>): string {
  const prefill = limits.prefill;
  if (prefill === null) return strategy.describe();
  const ramp = prefill.rampNs === undefined ? '' : `, opened from 1 over ${prefill.rampNs / 1e9} s`;
  return `${strategy.describe()}, at most ${prefill.limit} ${prefill.limit === 1 ? 'request' : 'requests'} in prefill (send to first token${ramp})`;
}

/** What a profiling replay reads besides the loaded dataset (fixed schedule only). */
export interface ReplaySource {
  /** The trace rows of a streaming replay; absent when the dataset was loaded whole. */
  feed?: AsyncIterable<StreamedTurn>;
  /**
   * With auto-offset: time zero, trace ms, in place of the earliest start of the rows replayed (a
   * shard replays the unsharded run's timeline: shard/shard-run.ts); a function is asked when the
   * replay starts.
   */
  autoZeroMs?: ScheduleZero;
}

/**
 * Builds the strategy for one phase, picked by the phase's load kind from the registry. Warmup never
 * replays the trace schedule (AIPerf): with a fixed schedule configured it runs closed-loop.
 * @param replay a streamed trace, and a time zero fixed by the run; absent: the dataset loaded whole.
 * @throws {ScheduleError} for a loaded dataset replayed on a fixed schedule whose first turns lack
 *   timestamps (a streamed one reports it when the row is read).
 */
export function buildStrategy(
  plan: RunPlan,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
  replay: ReplaySource = {},
): LoadStrategy {
  return createStrategy(loadPlan(plan, dataset, limits, phase, replay));
}

function loadPlan(
  plan: RunPlan,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
  replay: ReplaySource,
): LoadPlan {
  const { load } = limits;
  const sessions = { source: sessionSource(plan, dataset, limits, phase), stop: limits.stop };
  const cap = load.concurrency === undefined ? {} : { concurrency: load.concurrency };
  switch (load.kind) {
    case 'fixed_schedule':
      if (phase === 'warmup') return { kind: 'concurrency', ...sessions, concurrency: load.concurrency ?? 1 };
      return {
        kind: 'fixed_schedule',
        schedule: { ...schedulePlan(load.zero, dataset, replay), pacing: load.pacing },
        stop: limits.stop,
        ...cap,
      };
    case 'request_rate':
      return {
        kind: 'request_rate',
        ...sessions,
        rate: ratePlan(plan, load.rate),
        ...cap,
        ...(load.concurrencyRampNs === undefined ? {} : { concurrencyRampNs: load.concurrencyRampNs }),
      };
    case 'concurrency':
      return {
        kind: 'concurrency',
        ...sessions,
        concurrency: load.concurrency,
        ...(load.rampNs === undefined ? {} : { rampNs: load.rampNs }),
      };
    case 'user_centric':
      return {
        kind: 'user_centric',
        ...sessions,
        ratePerS: load.ratePerS,
        users: load.users,
        sessionTurns: averageTurns(dataset),
        ...cap,
        ...(load.concurrencyRampNs === undefined ? {} : { concurrencyRampNs: load.concurrencyRampNs }),
      };
  }
}

/** The dataset's average turns per conversation, rounded (at least 1). */
function averageTurns(dataset: Dataset): number {
  const n = dataset.conversations.length;
  if (n === 0) return 1;
  const turns = dataset.conversations.reduce((sum, c) => sum + c.turns.length, 0);
  return Math.max(1, Math.round(turns / n));
}

/** The sessions of a phase in `--dataset-sampling-strategy` order (warmup on its own seed). */
function sessionSource(
  plan: RunPlan,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
): SessionSource {
  const n = Math.max(1, dataset.conversations.length);
  const seed = plan.randomSeed + (phase === 'warmup' ? 1 : 0);
  const sampler = createConversationSampler(plan.input.sampling, n, seed);
  return samplerSource(
    dataset.conversations,
    () => sampler.next(),
    limits.sessions ?? (limits.onePass ? n : Number.POSITIVE_INFINITY),
  );
}

function ratePlan(plan: RunPlan, rate: RateSpec): RatePlan {
  return { ...rate, seed: plan.randomSeed, ...shardArrivals(plan, rate.ratePerS) };
}

/**
 * Time zero of a replay: the start offset, or with auto-offset the one the run fixed, else the
 * earliest first turn (`'auto'` when streamed).
 */
function schedulePlan(zero: ScheduleZeroSpec, dataset: Dataset, replay: ReplaySource): SchedulePlan {
  const { feed, autoZeroMs } = replay;
  const zeroMs =
    zero.kind === 'offset'
      ? zero.ms
      : (autoZeroMs ?? (feed === undefined ? earliestFirstTurnMs(dataset.conversations) : 'auto'));
  return { zeroMs, ...(feed === undefined ? {} : { feed }) };
}
