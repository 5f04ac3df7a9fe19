/**
 * The load strategies by name, each built by a factory of ONE signature from one {@link LoadPlan}:
 * the run turns its configuration into a plan, picks a name, and calls {@link createStrategy}.
 * Each factory reads only its part of the plan.
 */
import type { StreamedTurn } from '../dataset/types.js';
import { type ArrivalPattern, createIntervals } from './arrivals.js';
import { createConcurrency } from './concurrency.js';
import { createFixedSchedule, type ScheduleZero } from './fixed-schedule.js';
import { RateCurve, type RateSeries } from './rate-curve.js';
import { createRequestRate } from './request-rate.js';
import type { SessionPacingOptions } from './session-pacing.js';
import type { SessionSource, StopConditions } from './session-source.js';
import type {
  ConcurrencyReport,
  FixedScheduleReport,
  LoadStrategy,
  RequestRateReport,
  StrategyName,
  StrategyReport,
  UserCentricReport,
} from './types.js';
import { createUserCentric } from './user-centric.js';

/** `--request-rate` (or `--request-rate-series`) and its arrival settings. */
export interface RatePlan {
  /** Requests/s asked for (`--request-rate`; 1 with a series, whose qps scale it); must be > 0. */
  ratePerS: number;
  /** `--request-rate-series`: the rate over time, in place of a constant or ramped one. */
  series?: RateSeries;
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
  /** `--open-loop-replay` and `--trace-idle-gap-cap-seconds`; absent: open loop, no cap. */
  pacing?: SessionPacingOptions;
}

/** What a strategy that issues sessions itself reads: their order and when to stop. */
interface SessionPlan {
  /** Sessions in dataset sampling order. */
  source: SessionSource;
  /** When to stop issuing. */
  stop: StopConditions;
}

/**
 * What a strategy is built from, keyed by the strategy's name as {@link STRATEGIES} keys it: each
 * kind carries exactly the parts its factory reads.
 */
export type LoadPlan =
  | (SessionPlan & {
      kind: 'concurrency';
      /** `--concurrency`: session slots. */
      concurrency: number;
      /** Time over which the slots open (`--concurrency-ramp-duration`), ns. */
      rampNs?: number;
    })
  | (SessionPlan & {
      kind: 'request_rate';
      rate: RatePlan;
      /** `--concurrency`: a cap on sessions in flight. */
      concurrency?: number;
      /** `--concurrency-ramp-duration`: the cap's slots open one by one over this time, ns. */
      concurrencyRampNs?: number;
    })
  | (SessionPlan & {
      kind: 'user_centric';
      /** `--user-centric-rate`, requests/s over all users. */
      ratePerS: number;
      /** `--num-users`. */
      users: number;
      /** The dataset's average turns per session, rounded (the users' virtual history). */
      sessionTurns: number;
      /** `--concurrency`: a cap on users holding a session. */
      concurrency?: number;
      /** `--concurrency-ramp-duration`: the cap's slots open one by one over this time, ns. */
      concurrencyRampNs?: number;
    })
  | {
      /** A replay follows its timestamps and ends with its rows, or its stop conditions. */
      kind: 'fixed_schedule';
      schedule: SchedulePlan;
      /** `--request-count`, `--benchmark-duration`: stop issuing before the rows end. */
      stop: StopConditions;
      /** `--concurrency`: a cap on sessions in flight. */
      concurrency?: number;
    };

/** The plan of strategy `K`. */
type PlanOf<K extends StrategyName> = Extract<LoadPlan, { kind: K }>;

/**
 * A strategy factory: the entry `K` of {@link STRATEGIES} takes the plan of kind `K` and its
 * strategy reports with `kind: K`.
 */
type StrategyFactory<K extends StrategyName> = (
  plan: PlanOf<K>,
) => LoadStrategy<Extract<StrategyReport, { kind: K }>>;

/** The load strategies by name. */
const STRATEGIES: { readonly [K in StrategyName]: StrategyFactory<K> } = {
  fixed_schedule: fixedScheduleFromPlan,
  request_rate: requestRateFromPlan,
  concurrency: concurrencyFromPlan,
  user_centric: userCentricFromPlan,
};

/**
 * Builds the strategy `plan.kind` from `plan`.
 * @throws {ConfigError} for a bad rate or arrival smoothness (naming `--request-rate` /
 *   `--arrival-smoothness`), which the configuration's rules exclude before a run.
 */
export function createStrategy(plan: LoadPlan): LoadStrategy {
  switch (plan.kind) {
    case 'fixed_schedule':
      return STRATEGIES.fixed_schedule(plan);
    case 'request_rate':
      return STRATEGIES.request_rate(plan);
    case 'concurrency':
      return STRATEGIES.concurrency(plan);
    case 'user_centric':
      return STRATEGIES.user_centric(plan);
  }
}

function userCentricFromPlan(plan: PlanOf<'user_centric'>): LoadStrategy<UserCentricReport> {
  const { kind: _kind, ...options } = plan;
  return createUserCentric(options);
}

function fixedScheduleFromPlan(plan: PlanOf<'fixed_schedule'>): LoadStrategy<FixedScheduleReport> {
  const { schedule } = plan;
  return createFixedSchedule({
    zeroMs: schedule.zeroMs,
    stop: plan.stop,
    ...(plan.concurrency === undefined ? {} : { concurrency: plan.concurrency }),
    ...(schedule.feed === undefined ? {} : { feed: schedule.feed }),
    ...(schedule.pacing === undefined ? {} : { pacing: schedule.pacing }),
  });
}

/** The shape of a plan's rate: its series, its ramp, or none (constant). */
function curveOf(rate: RatePlan): RateCurve | undefined {
  if (rate.series !== undefined) return RateCurve.series(rate.series);
  return rate.rampNs === undefined ? undefined : RateCurve.ramp(rate.rampNs);
}

function requestRateFromPlan(plan: PlanOf<'request_rate'>): LoadStrategy<RequestRateReport> {
  const { rate } = plan;
  const curve = curveOf(rate);
  const firstTickNs = rate.firstTickNs ?? curve?.firstArrivalNs();
  return createRequestRate({
    ratePerS: rate.ratePerS,
    intervals: createIntervals(rate.pattern, rate.ratePerS, rate.seed, rate.smoothness, rate.stream),
    source: plan.source,
    stop: plan.stop,
    ...(plan.concurrency === undefined ? {} : { concurrency: plan.concurrency }),
    ...(plan.concurrencyRampNs === undefined ? {} : { concurrencyRampNs: plan.concurrencyRampNs }),
    ...(curve === undefined ? {} : { curve }),
    ...(firstTickNs === undefined ? {} : { firstTickNs }),
    arrivals: rate.pattern === 'gamma' ? `gamma, smoothness ${rate.smoothness}` : rate.pattern,
  });
}

function concurrencyFromPlan(plan: PlanOf<'concurrency'>): LoadStrategy<ConcurrencyReport> {
  return createConcurrency({
    concurrency: plan.concurrency,
    source: plan.source,
    stop: plan.stop,
    ...(plan.rampNs === undefined ? {} : { rampNs: plan.rampNs }),
  });
}

/** The configuration fields that choose a strategy (a `ProfileConfig` has them all). */
export interface StrategyChoice {
  /** `--fixed-schedule`, resolved. */
  fixedSchedule: boolean;
  /** `--request-rate`, requests/s. */
  requestRate?: number | undefined;
  /** `--request-rate-series`. */
  requestRateSeries?: RateSeries | undefined;
  /** `--concurrency`. */
  concurrency?: number | undefined;
  /** `--user-centric-rate`, requests/s. */
  userCentricRate?: number | undefined;
}

/**
 * Which strategy a configuration selects, in AIPerf's order: a fixed schedule when resolved so,
 * user-centric timing when `--user-centric-rate` is set, a request rate when `--request-rate` is,
 * closed-loop concurrency otherwise (AIPerf's default).
 */
export function strategyName(choice: StrategyChoice): StrategyName {
  if (choice.fixedSchedule) return 'fixed_schedule';
  if (choice.userCentricRate !== undefined) return 'user_centric';
  const rated = choice.requestRate !== undefined || choice.requestRateSeries !== undefined;
  return rated ? 'request_rate' : 'concurrency';
}

/**
 * Run-folder stimulus part, AIPerf style: `fixed_schedule`, `concurrency8`, `request_rate100`,
 * `request_rate_series`, `user_centric_rate1`.
 */
export function stimulusName(choice: StrategyChoice): string {
  const name = strategyName(choice);
  if (name === 'fixed_schedule') return name;
  if (choice.requestRateSeries !== undefined) return 'request_rate_series';
  if (name === 'user_centric') return `user_centric_rate${choice.userCentricRate}`;
  return name === 'request_rate'
    ? `request_rate${choice.requestRate}`
    : `concurrency${choice.concurrency ?? 1}`;
}
