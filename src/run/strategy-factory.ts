/**
 * Chooses the load strategy of a phase from the configuration (one file per strategy, picked from
 * the typed {@link STRATEGIES} map): a fixed schedule for timestamped traces (unless
 * `--no-fixed-schedule`), a request rate when `--request-rate` is set, closed-loop concurrency
 * otherwise (default 1, as AIPerf).
 */
import { createConversationSampler, defaultSamplingStrategy } from '../dataset/sampling.js';
import type { Dataset, StreamedTurn } from '../dataset/types.js';
import { createIntervals } from '../timing/arrivals.js';
import { createConcurrency } from '../timing/concurrency.js';
import { createFixedSchedule, earliestFirstTurnMs } from '../timing/fixed-schedule.js';
import { createRequestRate } from '../timing/request-rate.js';
import { type StopConditions, samplerSource } from '../timing/session-source.js';
import type { LoadStrategy } from '../timing/types.js';
import type { ProfileConfig } from './config.js';

/** Strategy names, as used in run folder names and logs. */
export const STRATEGIES = {
  fixed_schedule: createFixedSchedule,
  concurrency: createConcurrency,
  request_rate: createRequestRate,
} as const;

/** One strategy name. */
export type StrategyName = keyof typeof STRATEGIES;

/** Which strategy a configuration selects. */
export function strategyName(config: ProfileConfig): StrategyName {
  if (config.fixedSchedule) return 'fixed_schedule';
  return config.requestRate === undefined ? 'concurrency' : 'request_rate';
}

/** Run-folder stimulus part, AIPerf style: `fixed_schedule`, `concurrency8`, `request_rate100`. */
export function stimulusName(config: ProfileConfig): string {
  const name = strategyName(config);
  if (name === 'fixed_schedule') return name;
  return name === 'request_rate'
    ? `request_rate${config.requestRate}`
    : `concurrency${config.concurrency ?? 1}`;
}

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
  const requestCount = Math.max(10, 2 * (config.concurrency ?? 1));
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

/**
 * Builds the strategy for one phase. Warmup never replays the trace schedule (AIPerf): it uses
 * the rate or concurrency settings.
 * @param feed the trace rows of a streaming replay (fixed schedule only); absent when the dataset
 *   was loaded whole.
 * @throws {ScheduleError} for a loaded dataset replayed on a fixed schedule whose first turns lack
 *   timestamps (a streamed one reports it when the row is read).
 */
export function buildStrategy(
  config: ProfileConfig,
  dataset: Dataset,
  limits: PhaseLimits,
  phase: 'warmup' | 'profiling',
  feed?: AsyncIterable<StreamedTurn>,
): LoadStrategy {
  const name = strategyName(config);
  if (name === 'fixed_schedule' && phase === 'profiling') {
    const zeroMs = !config.fixedScheduleAutoOffset
      ? (config.fixedScheduleStartOffsetMs ?? 0) / config.synthesisSpeedupRatio
      : feed === undefined
        ? earliestFirstTurnMs(dataset.conversations)
        : 'auto';
    return STRATEGIES.fixed_schedule({
      zeroMs,
      ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
      ...(feed === undefined ? {} : { feed }),
    });
  }
  const sampling = config.datasetSamplingStrategy ?? defaultSamplingStrategy(config.customDatasetType);
  const n = Math.max(1, dataset.conversations.length);
  const sampler = createConversationSampler(sampling, n, config.randomSeed + (phase === 'warmup' ? 1 : 0));
  const source = samplerSource(
    dataset.conversations,
    () => sampler.next(),
    limits.onePass ? n : Number.POSITIVE_INFINITY,
  );
  if (name === 'request_rate' && config.requestRate !== undefined) {
    const pattern = config.arrivalPattern ?? 'poisson';
    return STRATEGIES.request_rate({
      ratePerS: config.requestRate,
      intervals: createIntervals(
        pattern,
        config.requestRate,
        config.randomSeed,
        config.arrivalSmoothness ?? 1,
      ),
      source,
      stop: limits.stop,
      ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
      ...(config.requestRateRampSeconds === undefined ? {} : { rampNs: config.requestRateRampSeconds * 1e9 }),
    });
  }
  return STRATEGIES.concurrency({
    concurrency: config.concurrency ?? 1,
    source,
    stop: limits.stop,
    ...(config.concurrencyRampSeconds === undefined ? {} : { rampNs: config.concurrencyRampSeconds * 1e9 }),
  });
}
