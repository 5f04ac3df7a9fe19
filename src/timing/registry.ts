/**
 * The load strategies by name, each built by a factory of ONE signature from one {@link LoadPlan}:
 * the run turns its configuration into a plan, picks a name, and calls {@link createStrategy}.
 * Each factory reads only its part of the plan.
 */
import type { StreamedTurn } from '../dataset/types.js';
import { ConfigError } from '../errors.js';
import { type ArrivalPattern, createIntervals } from './arrivals.js';
import { createConcurrency } from './concurrency.js';
import { createFixedSchedule, type ScheduleZero } from './fixed-schedule.js';
import { createRequestRate } from './request-rate.js';
import type { SessionSource, StopConditions } from './session-source.js';
import type {
  ConcurrencyReport,
  FixedScheduleReport,
  LoadStrategy,
  RequestRateReport,
  StrategyName,
  StrategyReport,
} from './types.js';

/** `--request-rate` and its arrival settings. */
export interface RatePlan {
  /** Requests/s asked for (`--request-rate`); must be > 0. */
  ratePerS: number;
  /** `--arrival-pattern`. */
  pattern: ArrivalPattern;
  /** Gamma shape (`--arrival-smoothness`); must be > 0 with `gamma`. */
  smoothness: number;
  /** Seed of the arrival intervals (`--random-seed`). */
  seed: number;
  /** Ramp from ~0 to the full rate over this time (`--request-rate-ramp-duration`), ns. */
  rampNs?: number;
  /** The first arrival this long after the start, ns (default 0). */
  firstTickNs?: number;
  /** Name of the arrivals' random stream within the seed (default `arrivals`). */
  stream?: string;
}

/** Fixed-schedule replay settings. */
export interface SchedulePlan {
  /**
   * Trace ms mapped to the start of the run; `'auto'` = the earliest first-turn timestamp read; a
   * function is asked when the replay starts (fixed-schedule.ts).
   */
  zeroMs: ScheduleZero;
  /** The trace rows of a streaming replay; absent when the dataset was loaded whole. */
  feed?: AsyncIterable<StreamedTurn>;
}

/** Everything any strategy may be built from; each factory reads its own part. */
export interface LoadPlan {
  /** Sessions in dataset sampling order (request rate and concurrency; a replay follows its timestamps). */
  source: SessionSource;
  /** When to stop issuing (request rate and concurrency; a replay ends with its rows). */
  stop: StopConditions;
  /** `--concurrency`: session slots (concurrency, default 1), or a session cap (rate, replay). */
  concurrency?: number;
  /** Time over which concurrency slots open (`--concurrency-ramp-duration`), ns. */
  concurrencyRampNs?: number;
  /** Required by `request_rate`. */
  rate?: RatePlan;
  /** Required by `fixed_schedule`. */
  schedule?: SchedulePlan;
}

/**
 * A strategy factory: every entry of {@link STRATEGIES} takes a {@link LoadPlan}; the strategy named
 * `K` reports with `kind: K`.
 */
type StrategyFactory<K extends StrategyName = StrategyName> = (
  plan: LoadPlan,
) => LoadStrategy<Extract<StrategyReport, { kind: K }>>;

/** The load strategies by name. */
const STRATEGIES: { readonly [K in StrategyName]: StrategyFactory<K> } = {
  fixed_schedule: fixedScheduleFromPlan,
  request_rate: requestRateFromPlan,
  concurrency: concurrencyFromPlan,
};

/**
 * Builds the strategy `name` from `plan`.
 * @throws {ConfigError} when the plan lacks the part that strategy needs (a rate, a schedule) or
 *   has a bad rate or arrival smoothness (naming `--request-rate` / `--arrival-smoothness`).
 */
export function createStrategy(name: StrategyName, plan: LoadPlan): LoadStrategy {
  return STRATEGIES[name](plan);
}

function fixedScheduleFromPlan(plan: LoadPlan): LoadStrategy<FixedScheduleReport> {
  const schedule = plan.schedule;
  if (schedule === undefined)
    throw new ConfigError('a fixed schedule needs its schedule settings (time zero)', '--fixed-schedule');
  return createFixedSchedule({
    zeroMs: schedule.zeroMs,
    ...(plan.concurrency === undefined ? {} : { concurrency: plan.concurrency }),
    ...(schedule.feed === undefined ? {} : { feed: schedule.feed }),
  });
}

function requestRateFromPlan(plan: LoadPlan): LoadStrategy<RequestRateReport> {
  const rate = plan.rate;
  if (rate === undefined) throw new ConfigError('the request_rate strategy needs a rate', '--request-rate');
  return createRequestRate({
    ratePerS: rate.ratePerS,
    intervals: createIntervals(rate.pattern, rate.ratePerS, rate.seed, rate.smoothness, rate.stream),
    source: plan.source,
    stop: plan.stop,
    ...(plan.concurrency === undefined ? {} : { concurrency: plan.concurrency }),
    ...(rate.rampNs === undefined ? {} : { rampNs: rate.rampNs }),
    ...(rate.firstTickNs === undefined ? {} : { firstTickNs: rate.firstTickNs }),
  });
}

function concurrencyFromPlan(plan: LoadPlan): LoadStrategy<ConcurrencyReport> {
  return createConcurrency({
    concurrency: plan.concurrency ?? 1,
    source: plan.source,
    stop: plan.stop,
    ...(plan.concurrencyRampNs === undefined ? {} : { rampNs: plan.concurrencyRampNs }),
  });
}

/** The configuration fields that choose a strategy (a `ProfileConfig` has them all). */
export interface StrategyChoice {
  /** `--fixed-schedule`, resolved. */
  fixedSchedule: boolean;
  /** `--request-rate`, requests/s. */
  requestRate?: number | undefined;
  /** `--concurrency`. */
  concurrency?: number | undefined;
}

/**
 * Which strategy a configuration selects: a fixed schedule when resolved so, a request rate when
 * `--request-rate` is set, closed-loop concurrency otherwise (AIPerf's default).
 */
export function strategyName(choice: StrategyChoice): StrategyName {
  if (choice.fixedSchedule) return 'fixed_schedule';
  return choice.requestRate === undefined ? 'concurrency' : 'request_rate';
}

/** Run-folder stimulus part, AIPerf style: `fixed_schedule`, `concurrency8`, `request_rate100`. */
export function stimulusName(choice: StrategyChoice): string {
  const name = strategyName(choice);
  if (name === 'fixed_schedule') return name;
  return name === 'request_rate'
    ? `request_rate${choice.requestRate}`
    : `concurrency${choice.concurrency ?? 1}`;
}
