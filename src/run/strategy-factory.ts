/**
 * Turns the configuration into the load of a phase: which strategy (picked by name from the registry
 * in `timing/registry.ts`), built from which {@link LoadPlan}, and the phase's stop conditions. A
 * fixed schedule for timestamped traces (unless `--no-fixed-schedule`), a request rate when
 * `--request-rate` is set, closed-loop concurrency otherwise (default 1, as AIPerf).
 */

import type { ProfileConfig } from '../config/resolve.js';
import { syntheticDefaultCount } from '../config/rules-shard.js';
import { createConversationSampler, defaultSamplingStrategy } from '../dataset/sampling.js';
import type { Dataset, StreamedTurn } from '../dataset/types.js';
import { shardArrivals } from '../shard/shard-run.js';
import { earliestFirstTurnMs, type ScheduleZero } from '../timing/fixed-schedule.js';
import {
  createStrategy,
  type LoadPlan,
  type RatePlan,
  type SchedulePlan,
  strategyName,
} from '../timing/registry.js';
import { type SessionSource, type StopConditions, samplerSource } from '../timing/session-source.js';
import type { LoadStrategy } from '../timing/types.js';

/** Phase-specific stop conditions. */
export interface PhaseLimits {
  stop: StopConditions;
  /** True when the dataset is replayed once (trace files without count/duration). */
  onePass: boolean;
}

/** Stop conditions of the profiling phase. */
export function profilingLimits(config: ProfileConfig, dataset: Dataset): PhaseLimits {
  const durationNs =
    config.benchmarkDurationSeconds === undefined ? undefined : config.benchmarkDurationSeconds * 1e9;
  if (config.requestCount !== undefined || durationNs !== undefined) {
    return {
      stop: {
        ...(config.requestCount === undefined ? {} : { requestCount: config.requestCount }),
        ...(durationNs === undefined ? {} : { durationNs }),
      },
      onePass: false,
    };
  }
  if (config.inputFile !== undefined) return { stop: {}, onePass: true };
  // Synthetic default (AIPerf): max(10, 2 × concurrency) requests.
  const requestCount = syntheticDefaultCount(config) ?? 10;
  return {
    stop: { requestCount: Math.min(requestCount, Number.MAX_SAFE_INTEGER) },
    onePass: dataset.conversations.length === 0,
  };
}

/** Stop conditions of the warmup phase; null when no warmup was asked for. */
export function warmupLimits(config: ProfileConfig): PhaseLimits | null {
  if (config.warmupRequestCount === undefined && config.warmupDurationSeconds === undefined) return null;
  return {
    stop: {
      ...(config.warmupRequestCount === undefined ? {} : { requestCount: config.warmupRequestCount }),
      ...(config.warmupDurationSeconds === undefined
        ? {}
        : { durationNs: config.warmupDurationSeconds * 1e9 }),
    },
    onePass: false,
  };
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
 * Builds the strategy for one phase, picked by name from the registry. Warmup never replays the
 * trace schedule (AIPerf): with a fixed schedule configured it runs closed-loop.
 * @param replay a streamed trace, and a time zero fixed by the run; absent: the dataset loaded whole.
 * @throws {ScheduleError} for a loaded dataset replayed on a fixed schedule whose first turns lack
 *   timestamps (a streamed one reports it when the row is read).
 * @throws {ConfigError} for a request rate or arrival smoothness that is not > 0.
 */
export function buildStrategy(
  config: ProfileConfig,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
  replay: ReplaySource = {},
): LoadStrategy {
  const configured = strategyName(config);
  const name = configured === 'fixed_schedule' && phase === 'warmup' ? 'concurrency' : configured;
  const plan: LoadPlan = {
    source: sessionSource(config, dataset, limits, phase),
    stop: limits.stop,
    ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
    ...(config.concurrencyRampSeconds === undefined
      ? {}
      : { concurrencyRampNs: config.concurrencyRampSeconds * 1e9 }),
    ...(config.requestRate === undefined ? {} : { rate: ratePlan(config, config.requestRate) }),
    ...(name === 'fixed_schedule' ? { schedule: schedulePlan(config, dataset, replay) } : {}),
  };
  return createStrategy(name, plan);
}

/** The sessions of a phase in `--dataset-sampling-strategy` order (warmup on its own seed). */
function sessionSource(
  config: ProfileConfig,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
): SessionSource {
  const sampling = config.datasetSamplingStrategy ?? defaultSamplingStrategy(config.customDatasetType);
  const n = Math.max(1, dataset.conversations.length);
  const sampler = createConversationSampler(sampling, n, config.randomSeed + (phase === 'warmup' ? 1 : 0));
  return samplerSource(
    dataset.conversations,
    () => sampler.next(),
    limits.onePass ? n : Number.POSITIVE_INFINITY,
  );
}

function ratePlan(config: ProfileConfig, ratePerS: number): RatePlan {
  return {
    ratePerS,
    pattern: config.arrivalPattern ?? 'poisson',
    smoothness: config.arrivalSmoothness ?? 1,
    seed: config.randomSeed,
    ...(config.requestRateRampSeconds === undefined ? {} : { rampNs: config.requestRateRampSeconds * 1e9 }),
    ...shardArrivals(config, ratePerS),
  };
}

/**
 * Time zero of a replay: the start offset, or with auto-offset the one the run fixed, else the
 * earliest first turn (`'auto'` when streamed).
 */
function schedulePlan(config: ProfileConfig, dataset: Dataset, replay: ReplaySource): SchedulePlan {
  const { feed, autoZeroMs } = replay;
  const zeroMs = !config.fixedScheduleAutoOffset
    ? (config.fixedScheduleStartOffsetMs ?? 0) / config.synthesisSpeedupRatio
    : (autoZeroMs ?? (feed === undefined ? earliestFirstTurnMs(dataset.conversations) : 'auto'));
  return { zeroMs, ...(feed === undefined ? {} : { feed }) };
}
