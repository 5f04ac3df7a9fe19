/**
 * Turns the configuration into the load of a phase: which strategy (picked by name from the registry
 * in `timing/registry.ts`), built from which {@link LoadPlan}, and the phase's stop conditions. A
 * fixed schedule for timestamped traces (unless `--no-fixed-schedule`), a request rate when
 * `--request-rate` is set, closed-loop concurrency otherwise (default 1, as AIPerf).
 */

import type { RateSpec, RunPlan, ScheduleZeroSpec } from '../config/plan.js';
import { createConversationSampler } from '../dataset/sampling.js';
import type { Dataset, StreamedTurn } from '../dataset/types.js';
import { shardArrivals } from '../shard/shard-run.js';
import { earliestFirstTurnMs, type ScheduleZero } from '../timing/fixed-schedule.js';
import { createStrategy, type LoadPlan, type RatePlan, type SchedulePlan } from '../timing/registry.js';
import { type SessionSource, type StopConditions, samplerSource } from '../timing/session-source.js';
import type { LoadStrategy } from '../timing/types.js';

/** Phase-specific stop conditions. */
export interface PhaseLimits {
  stop: StopConditions;
  /** True when the dataset is replayed once (trace files without count/duration). */
  onePass: boolean;
  /** Sessions to start, then end when they complete (`--conversation-num`); absent: no such limit. */
  sessions?: number;
}

/** Stop conditions of the profiling phase (the plan's stop; a synthetic default count stops too). */
export function profilingLimits(plan: Pick<RunPlan, 'stop' | 'input'>, dataset: Dataset): PhaseLimits {
  const { requestCount, durationNs, sessionCount, defaulted } = plan.stop;
  if (defaulted && plan.input.kind === 'file' && requestCount === undefined)
    return { stop: {}, onePass: true };
  return {
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

/** Stop conditions of the warmup phase; null when no warmup was asked for. */
export function warmupLimits(plan: Pick<RunPlan, 'warmup'>): PhaseLimits | null {
  return plan.warmup === null ? null : { stop: { ...plan.warmup }, onePass: false };
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
 * Builds the strategy for one phase, picked by the plan's load kind from the registry. Warmup never
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
  const { load } = plan;
  const sessions = { source: sessionSource(plan, dataset, limits, phase), stop: limits.stop };
  const cap = load.concurrency === undefined ? {} : { concurrency: load.concurrency };
  switch (load.kind) {
    case 'fixed_schedule':
      if (phase === 'warmup') return { kind: 'concurrency', ...sessions, concurrency: load.concurrency ?? 1 };
      return {
        kind: 'fixed_schedule',
        schedule: schedulePlan(load.zero, dataset, replay),
        stop: limits.stop,
        ...cap,
      };
    case 'request_rate':
      return { kind: 'request_rate', ...sessions, rate: ratePlan(plan, load.rate), ...cap };
    case 'concurrency':
      return {
        kind: 'concurrency',
        ...sessions,
        concurrency: load.concurrency,
        ...(load.rampNs === undefined ? {} : { rampNs: load.rampNs }),
      };
  }
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
