/**
 * What a run does, resolved once from its configuration into typed parts: the input is a file or
 * synthetic data, the load is one strategy's settings keyed by `kind` (the strategy registry's
 * names), and every default a stage would otherwise re-apply where it reads an option is applied
 * here. The stages of a run read a {@link RunPlan}; the flat {@link ProfileConfig} stays what the
 * user asked for, as the summary's `input_config` records it.
 */
import type { DatasetTypeName } from '../dataset/registry.js';
import { defaultSamplingStrategy, type SamplingStrategy } from '../dataset/sampling.js';
import type { SyntheticOptions } from '../dataset/synthetic-options.js';
import type { ArrivalPattern } from '../timing/arrivals.js';
import type { RateSeries } from '../timing/rate-curve.js';
import { strategyName } from '../timing/registry.js';
import type { SessionPacingOptions } from '../timing/session-pacing.js';
import { DEFAULT_WARMUP_MAX_ROUNDS } from './fields-phase-load.js';
import { DEFAULT_WAIT_FOR_MODEL_INTERVAL_S, DEFAULT_WAIT_FOR_MODEL_MODE } from './fields-server.js';
import type { ProfileConfig } from './resolve.js';
import { syntheticDefaultCount } from './rules-shard.js';

/** A list with at least one element. */
export type NonEmpty<T> = readonly [T, ...T[]];

/** What the run replays or generates. */
export type RunInput =
  | {
      kind: 'file';
      /** `--input-file`. */
      file: string;
      /** `--custom-dataset-type`. */
      datasetType: DatasetTypeName;
      /** `--dataset-sampling-strategy`, resolved: the dataset type's default when not given. */
      sampling: SamplingStrategy;
      /** `--fixed-schedule-start-offset` / `-end-offset`, trace ms: the rows read; absent: all. */
      window: { startOffsetMs?: number; endOffsetMs?: number };
      /** `--osl` / `--osl-stddev`: the output length of rows without their own; absent: none. */
      osl?: { mean: number; stddev: number };
    }
  | {
      kind: 'synthetic';
      /** The synthetic dataset's options (`--synthetic-input-tokens-mean`, …). */
      options: SyntheticOptions;
      /** `--dataset-sampling-strategy`, resolved: `shuffle` when not given. */
      sampling: SamplingStrategy;
    };

/** `--request-rate` and its arrival settings, defaults applied. */
export interface RateSpec {
  /** `--request-rate`, requests/s (> 0); 1 with `series`, whose qps scale it. */
  ratePerS: number;
  /** `--request-rate-series`: the rate over time; absent: constant (or ramped). */
  series?: RateSeries;
  /** `--arrival-pattern` (default `poisson`). */
  pattern: ArrivalPattern;
  /** `--arrival-smoothness`, the gamma shape (default 1). */
  smoothness: number;
  /** `--request-rate-ramp-duration`, ns; absent: no ramp. */
  rampNs?: number;
}

/** Where a fixed schedule's time zero comes from. */
export type ScheduleZeroSpec =
  /** `--fixed-schedule-start-offset` (default 0) over the speed-up ratio, trace ms. */
  | { kind: 'offset'; ms: number }
  /** `--fixed-schedule-auto-offset`: the earliest first turn replayed (or the run's, when sharded). */
  | { kind: 'auto' };

/** How the profiling phase drives load: one strategy's settings, keyed by its registry name. */
export type LoadSpec =
  | {
      kind: 'concurrency';
      /** `--concurrency` (default 1, AIPerf's): session slots. */
      concurrency: number;
      /** `--concurrency-ramp-duration`, ns; absent: every slot opens at once. */
      rampNs?: number;
    }
  | {
      kind: 'request_rate';
      rate: RateSpec;
      /** `--concurrency`: a cap on sessions in flight; absent: none. */
      concurrency?: number;
      /** `--concurrency-ramp-duration`, ns: the cap's slots open one by one over it; absent: at once. */
      concurrencyRampNs?: number;
    }
  | {
      kind: 'user_centric';
      /** `--user-centric-rate`, requests/s over all users (> 0). */
      ratePerS: number;
      /** `--num-users`. */
      users: number;
      /** `--concurrency`: a cap on users holding a session; absent: none. */
      concurrency?: number;
      /** `--concurrency-ramp-duration`, ns: the cap's slots open one by one over it; absent: at once. */
      concurrencyRampNs?: number;
    }
  | {
      kind: 'fixed_schedule';
      zero: ScheduleZeroSpec;
      /** `--concurrency`: a cap on sessions in flight; absent: none. */
      concurrency?: number;
      /** `--open-loop-replay` (default on) and `--trace-idle-gap-cap-seconds` (in ms; absent: no cap). */
      pacing: SessionPacingOptions;
    };

/** When the profiling phase stops issuing. */
export interface StopSpec {
  /** `--request-count`, or a synthetic run's default (AIPerf's max(10, 2 × concurrency)); absent: none. */
  requestCount?: number;
  /** `--benchmark-duration`, ns; absent: none. */
  durationNs?: number;
  /**
   * `--conversation-num` (random_pool: 100 by default, as AIPerf): start this many sessions, then end
   * when they complete; absent: none.
   */
  sessionCount?: number;
  /** True when none was given: a trace is replayed once, a synthetic run stops at its default count. */
  defaulted: boolean;
}

/** `--prefill-concurrency` of a phase: requests between their send and their first token at once. */
export interface PrefillSpec {
  /** Slots (>= 1). */
  limit: number;
  /** `--prefill-concurrency-ramp-duration`, ns: the slots open from 1 to `limit` over it; absent: at once. */
  rampNs?: number;
}

/**
 * The warmup phase (`--warmup-request-count`, `--warmup-duration` and/or `--num-warmup-sessions`; at
 * least one, the first reached ends it), with its own load: each `--warmup-*` load option, or the
 * profiling phase's value when absent (AIPerf's docs/tutorials/warmup.md).
 */
export interface WarmupSpec {
  requestCount?: number;
  /** ns. */
  durationNs?: number;
  /** `--num-warmup-sessions`: sessions started (each run to its end); absent: no limit. */
  sessions?: number;
  /** `--warmup-grace-period`, s, after `--warmup-duration`; Infinity (AIPerf's default): wait for every answer. */
  graceSeconds: number;
  /**
   * How the warmup drives load: a request rate when `--warmup-request-rate` or `--request-rate` is
   * set, else closed-loop concurrency (also for a fixed schedule, whose warmup never replays).
   */
  load: Extract<LoadSpec, { kind: 'concurrency' | 'request_rate' }>;
  /** `--warmup-prefill-concurrency`, else `--prefill-concurrency`; null: no prefill gate. */
  prefill: PrefillSpec | null;
  /**
   * `--warmup-until-cached`: the most rounds (`--warmup-max-rounds`), each the same warm-up again,
   * run until one in which the server reports cached prompt tokens; null: one round.
   */
  untilCached: { maxRounds: number } | null;
}

/** `--wait-for-model-*`, defaults applied; present only with a timeout > 0. */
export interface WaitForModelSpec {
  timeoutS: number;
  mode: 'models' | 'inference' | 'both';
  intervalS: number;
}

/** `--request-cancellation-rate` and `-delay`, present only with a rate > 0. */
export interface CancellationSpec {
  /** Percent of requests cancelled (0–100]. */
  ratePct: number;
  /** After the send, ms (default 0). */
  delayMs: number;
}

/** The flat options a plan replaces with typed parts. */
const PLANNED_KEYS = [
  'models',
  'inputFile',
  'customDatasetType',
  'synthetic',
  'datasetSamplingStrategy',
  'fixedSchedule',
  'fixedScheduleStartOffsetMs',
  'fixedScheduleEndOffsetMs',
  'fixedScheduleAutoOffset',
  'openLoopReplay',
  'traceIdleGapCapSeconds',
  'requestRate',
  'requestRateSeries',
  'concurrency',
  'arrivalPattern',
  'arrivalSmoothness',
  'requestRateRampSeconds',
  'concurrencyRampSeconds',
  'requestCount',
  'benchmarkDurationSeconds',
  'conversationNum',
  'warmupRequestCount',
  'warmupDurationSeconds',
  'numWarmupSessions',
  'warmupConcurrency',
  'warmupRequestRate',
  'warmupArrivalPattern',
  'warmupPrefillConcurrency',
  'warmupGracePeriodSeconds',
  'warmupConcurrencyRampSeconds',
  'warmupPrefillConcurrencyRampSeconds',
  'warmupRequestRateRampSeconds',
  'warmupUntilCached',
  'warmupMaxRounds',
  'prefillConcurrency',
  'prefillConcurrencyRampSeconds',
  'userCentricRate',
  'numUsers',
  'waitForModelTimeoutSeconds',
  'waitForModelMode',
  'waitForModelIntervalSeconds',
  'requestCancellationRatePct',
  'requestCancellationDelaySeconds',
] as const satisfies ReadonlyArray<keyof ProfileConfig>;

type PlannedKey = (typeof PLANNED_KEYS)[number];

/**
 * A run's resolved plan: the configuration's other options as they are, and the typed parts in place
 * of the flat options they were resolved from (which a stage can then not read by mistake).
 */
export interface RunPlan extends Omit<ProfileConfig, PlannedKey> {
  /** `--model`: at least one. */
  models: NonEmpty<string>;
  input: RunInput;
  load: LoadSpec;
  stop: StopSpec;
  /** The profiling phase's prefill gate; null without `--prefill-concurrency`. */
  prefill: PrefillSpec | null;
  warmup: WarmupSpec | null;
  waitForModel: WaitForModelSpec | null;
  cancellation: CancellationSpec | null;
}

const nsOf = (seconds: number | undefined): number | undefined =>
  seconds === undefined ? undefined : seconds * 1e9;

/** Drops the keys whose value is undefined, so optional parts are absent rather than undefined. */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The input of `config`: its file and dataset type, or its synthetic options. */
function inputOf(config: ProfileConfig): RunInput {
  const sampling = config.datasetSamplingStrategy ?? defaultSamplingStrategy(config.customDatasetType);
  if (config.inputFile === undefined || config.customDatasetType === undefined)
    return { kind: 'synthetic', options: syntheticOf(config), sampling };
  const window = defined({
    startOffsetMs: config.fixedScheduleStartOffsetMs,
    endOffsetMs: config.fixedScheduleEndOffsetMs,
  });
  const file = config.inputFile;
  const given = config.synthetic?.osl;
  const osl = given === undefined ? undefined : { mean: given, stddev: config.synthetic?.oslStddev ?? 0 };
  return {
    kind: 'file',
    file,
    datasetType: config.customDatasetType,
    sampling,
    window,
    ...(osl ? { osl } : {}),
  };
}

/** The synthetic options, generating `--conversation-num` conversations unless `--num-dataset-entries` is given. */
function syntheticOf(config: ProfileConfig): SyntheticOptions {
  const options = config.synthetic ?? {};
  if (config.conversationNum === undefined || options.numDatasetEntries !== undefined) return options;
  return { ...options, numDatasetEntries: config.conversationNum };
}

/** The load of `config`, by the strategy it selects (timing/registry.ts `strategyName`). */
function loadOf(config: ProfileConfig): LoadSpec {
  const cap = config.concurrency;
  const name = strategyName(config);
  if (name === 'fixed_schedule') {
    const zero: ScheduleZeroSpec = config.fixedScheduleAutoOffset
      ? { kind: 'auto' }
      : { kind: 'offset', ms: (config.fixedScheduleStartOffsetMs ?? 0) / config.synthesisSpeedupRatio };
    const capS = config.traceIdleGapCapSeconds;
    const pacing = defined({
      openLoop: config.openLoopReplay ?? true,
      idleGapCapMs: capS === undefined ? undefined : capS * 1000,
    });
    return defined({ kind: name, zero, concurrency: cap, pacing });
  }
  if (name === 'user_centric' && config.userCentricRate !== undefined) {
    return defined({
      kind: name,
      ratePerS: config.userCentricRate,
      users: config.numUsers ?? 1,
      concurrency: cap,
    });
  }
  const series = config.requestRateSeries;
  if (name === 'request_rate' && (config.requestRate !== undefined || series !== undefined)) {
    const rate: RateSpec = defined({
      ratePerS: config.requestRate ?? 1,
      series,
      pattern: config.arrivalPattern ?? 'poisson',
      smoothness: config.arrivalSmoothness ?? 1,
      rampNs: nsOf(config.requestRateRampSeconds),
    });
    return defined({
      kind: name,
      rate,
      concurrency: cap,
      concurrencyRampNs: cap === undefined ? undefined : nsOf(config.concurrencyRampSeconds),
    });
  }
  return defined({ kind: 'concurrency', concurrency: cap ?? 1, rampNs: nsOf(config.concurrencyRampSeconds) });
}

/** AIPerf's `--conversation-num` default for a `random_pool` file with no other stop condition. */
const RANDOM_POOL_DEFAULT_SESSIONS = 100;

/**
 * When the profiling phase stops issuing. A `--request-rate-series` without `--request-count` or
 * `--benchmark-duration` ends at its last point, as `--benchmark-duration` would.
 */
function stopOf(config: ProfileConfig): StopSpec {
  const counted = config.requestCount !== undefined || config.benchmarkDurationSeconds !== undefined;
  const seriesEndS = counted ? undefined : config.requestRateSeries?.points.at(-1)?.time_s;
  const pool = config.inputFile !== undefined && config.customDatasetType === 'random_pool';
  const sessionCount =
    config.conversationNum ?? (pool && !counted ? RANDOM_POOL_DEFAULT_SESSIONS : undefined);
  const requestCount = config.requestCount ?? syntheticDefaultCount(config);
  return defined({
    requestCount,
    durationNs: nsOf(config.benchmarkDurationSeconds ?? seriesEndS),
    sessionCount,
    defaulted: !counted && seriesEndS === undefined && sessionCount === undefined,
  });
}

/** True when a warmup phase was asked for (`--warmup-request-count`, `--warmup-duration` or `--num-warmup-sessions`). */
function warmupAsked(
  c: Pick<ProfileConfig, 'warmupRequestCount' | 'warmupDurationSeconds' | 'numWarmupSessions'>,
): boolean {
  return (
    c.warmupRequestCount !== undefined ||
    c.warmupDurationSeconds !== undefined ||
    c.numWarmupSessions !== undefined
  );
}

function prefillOf(limit: number | undefined, rampSeconds: number | undefined): PrefillSpec | null {
  return limit === undefined ? null : defined({ limit, rampNs: nsOf(rampSeconds) });
}

/** The warmup's load: its own `--warmup-*` settings, each defaulting to the profiling phase's. */
function warmupLoadOf(config: ProfileConfig): WarmupSpec['load'] {
  const cap = config.warmupConcurrency ?? config.concurrency;
  const concurrencyRampNs = nsOf(config.warmupConcurrencyRampSeconds ?? config.concurrencyRampSeconds);
  const ratePerS = config.warmupRequestRate ?? config.requestRate;
  if (ratePerS === undefined)
    return defined({ kind: 'concurrency', concurrency: cap ?? 1, rampNs: concurrencyRampNs });
  const rate: RateSpec = defined({
    ratePerS,
    pattern: config.warmupArrivalPattern ?? config.arrivalPattern ?? 'poisson',
    smoothness: config.arrivalSmoothness ?? 1,
    rampNs: nsOf(config.warmupRequestRateRampSeconds ?? config.requestRateRampSeconds),
  });
  return defined({
    kind: 'request_rate',
    rate,
    concurrency: cap,
    concurrencyRampNs: cap === undefined ? undefined : concurrencyRampNs,
  });
}

function warmupOf(config: ProfileConfig): WarmupSpec | null {
  if (!warmupAsked(config)) return null;
  return defined({
    requestCount: config.warmupRequestCount,
    durationNs: nsOf(config.warmupDurationSeconds),
    sessions: config.numWarmupSessions,
    graceSeconds: config.warmupGracePeriodSeconds ?? Number.POSITIVE_INFINITY,
    load: warmupLoadOf(config),
    prefill: prefillOf(
      config.warmupPrefillConcurrency ?? config.prefillConcurrency,
      config.warmupPrefillConcurrencyRampSeconds ?? config.prefillConcurrencyRampSeconds,
    ),
    untilCached: config.warmupUntilCached
      ? { maxRounds: config.warmupMaxRounds ?? DEFAULT_WARMUP_MAX_ROUNDS }
      : null,
  });
}

function waitForModelOf(config: ProfileConfig): WaitForModelSpec | null {
  if (!(config.waitForModelTimeoutSeconds > 0)) return null;
  return {
    timeoutS: config.waitForModelTimeoutSeconds,
    mode: config.waitForModelMode ?? DEFAULT_WAIT_FOR_MODEL_MODE,
    intervalS: config.waitForModelIntervalSeconds ?? DEFAULT_WAIT_FOR_MODEL_INTERVAL_S,
  };
}

function cancellationOf(config: ProfileConfig): CancellationSpec | null {
  const ratePct = config.requestCancellationRatePct;
  if (ratePct === undefined || ratePct <= 0) return null;
  return { ratePct, delayMs: (config.requestCancellationDelaySeconds ?? 0) * 1000 };
}

/**
 * The plan of a validated configuration. The schema's rules (./rules.ts) have excluded the states a
 * plan cannot express (a file without its dataset type, a rate of 0), so this never throws.
 */
export function planRun(config: ProfileConfig): RunPlan {
  const rest: Partial<ProfileConfig> = { ...config };
  for (const key of PLANNED_KEYS) delete rest[key];
  return {
    ...(rest as Omit<ProfileConfig, PlannedKey>),
    models: config.models,
    input: inputOf(config),
    load: loadOf(config),
    stop: stopOf(config),
    prefill: prefillOf(config.prefillConcurrency, config.prefillConcurrencyRampSeconds),
    warmup: warmupOf(config),
    waitForModel: waitForModelOf(config),
    cancellation: cancellationOf(config),
  };
}
