/**
 * Load generator, stop condition, warmup, cancellation and goodput options: `--help`'s "Load:" group.
 * Each field carries its AIPerf flag, unit, default and help text ({@link option}); field names
 * follow the flags with units in the names.
 */
import { z } from 'zod';
import { ARRIVAL_PATTERNS } from '../timing/arrivals.js';
import { option } from '../util/option-meta.js';
import { int, positive } from './field-kinds.js';
import { gateFields, userCentricFields, warmupLoadFields } from './fields-phase-load.js';
import { shardFields } from './fields-shard.js';
import { RateSeriesError, rateSeriesOf } from './rate-series.js';

/**
 * The most concurrent sessions one client process takes: more connections than one source address
 * has ports for to one server (about 64k); a larger load is split over shards (`--shard-count`).
 */
export const MAX_CONCURRENCY = 65_536;

const MAX_CONCURRENCY_REASON =
  'one client process cannot hold more connections to one server (its ports run out); split a larger load with --shard-count';

/**
 * Answered profiling requests (client cancellations not counted) before `--failed-request-threshold`
 * is checked, so that one early failure does not stop a run (AIPerf waits for max(concurrency, 10)).
 */
export const FAILED_THRESHOLD_MIN_REQUESTS = 20;

/** Load generator, stop condition, warmup, cancellation and goodput options. */
export const loadFields = {
  /** `--concurrency`: session-slot ceiling (with a fixed schedule: an optional cap); a list is a sweep. */
  concurrency: option(int(1).max(MAX_CONCURRENCY, { error: MAX_CONCURRENCY_REASON }).optional(), {
    flag: 'concurrency',
    unit: 'n[,n…]',
    help: 'concurrent sessions (at most 65,536 in one process: use --shard-count beyond); a list runs a sweep',
    defaultText: '1 without --request-rate',
    list: true,
  }),
  /** `--request-rate`, requests/s (open loop); a list is a sweep. */
  requestRate: option(positive.optional(), {
    flag: 'request-rate',
    unit: 'r[,r…]',
    help: 'requests/s (open loop); a list runs a sweep',
    list: true,
  }),
  /**
   * `--request-rate-series FILE`: the rate over time, read and checked when the configuration is
   * (./rate-series.ts); the value is the file with its points, as `input_config` records them.
   */
  requestRateSeries: option(
    z
      .union([z.string(), z.object({ file: z.string(), points: z.array(z.unknown()) })])
      .transform((value, ctx) => {
        try {
          return rateSeriesOf(value);
        } catch (err) {
          if (!(err instanceof RateSeriesError)) throw err;
          ctx.addIssue({ code: 'custom', message: err.message });
          return z.NEVER;
        }
      })
      .optional(),
    {
      flag: 'request-rate-series',
      unit: 'file',
      help: 'requests/s over time from a JSON file of {time_s, qps} points, linear in between, the last held; without --request-count or --benchmark-duration the run ends at the last point',
    },
  ),
  /** `--arrival-pattern`: inter-arrival distribution of `--request-rate`. */
  arrivalPattern: option(z.enum(ARRIVAL_PATTERNS).optional(), {
    flag: 'arrival-pattern',
    unit: 'p',
    help: 'inter-arrival distribution (needs --request-rate)',
    defaultText: 'poisson',
  }),
  /** `--arrival-smoothness`: gamma shape (1 = Poisson). */
  arrivalSmoothness: option(positive.optional(), {
    flag: 'arrival-smoothness',
    unit: 'k',
    help: 'gamma shape (1 = Poisson; needs --arrival-pattern gamma)',
  }),
  /** `--request-count`: stop issuing after this many requests. */
  requestCount: option(int(1).optional(), {
    flag: 'request-count',
    unit: 'n',
    help: 'stop after this many requests',
    defaultText: 'the trace once; synthetic max(10, 2 × concurrency)',
  }),
  /**
   * `--conversation-num` (AIPerf's name; also `--num-conversations`, `--num-sessions`): sessions to
   * run. The run starts this many sessions and ends when they have completed (with `--request-count`
   * or `--benchmark-duration` too, at whichever comes first). A synthetic run also generates this
   * many conversations unless `--num-dataset-entries` says otherwise (AIPerf, CLI reference,
   * "Conversation Input").
   */
  conversationNum: option(int(1).optional(), {
    flag: 'conversation-num',
    unit: 'n',
    help: 'sessions to run; the run ends when they complete (synthetic: also the conversations generated)',
    defaultText: 'unset (random_pool: 100)',
  }),
  /** `--benchmark-duration`, s: stop issuing after this long. */
  benchmarkDurationSeconds: option(positive.optional(), {
    flag: 'benchmark-duration',
    unit: 's',
    help: 'stop issuing after this many seconds',
  }),
  /**
   * `--failed-request-threshold` (AIPerf's flag): once more than this fraction of the profiling
   * requests answered so far failed (after {@link FAILED_THRESHOLD_MIN_REQUESTS} of them), the run
   * stops issuing, drains and exits non-zero (run/failure-stop.ts).
   */
  failedRequestThreshold: option(z.number().gt(0).max(1).optional(), {
    flag: 'failed-request-threshold',
    unit: 'r',
    help: `stop issuing once more than this fraction (0 < r <= 1) of the answered profiling requests failed, counted from the ${FAILED_THRESHOLD_MIN_REQUESTS}th; drain, export, exit 4`,
  }),
  /** `--benchmark-grace-period`, s: wait this long for in-flight requests at a stop. */
  gracePeriodSeconds: option(z.number().min(0).default(30), {
    flag: 'benchmark-grace-period',
    unit: 's',
    help: 'wait this long for in-flight requests at a stop',
    valueHint: 'AIPerf’s `inf` is not taken: give a large number of seconds.',
  }),
  /** `--concurrency-ramp-duration`, s. */
  concurrencyRampSeconds: option(positive.optional(), {
    flag: 'concurrency-ramp-duration',
    unit: 's',
    help: 'open the concurrency slots over this time',
  }),
  /** `--request-rate-ramp-duration`, s. */
  requestRateRampSeconds: option(positive.optional(), {
    flag: 'request-rate-ramp-duration',
    unit: 's',
    help: 'raise the rate linearly over this time',
  }),
  /** `--warmup-request-count`: warmup requests before profiling (not in the metrics). */
  warmupRequestCount: option(int(1).optional(), {
    flag: 'warmup-request-count',
    unit: 'n',
    help: 'warmup requests before profiling (not in the metrics)',
  }),
  /** `--warmup-duration`, s. */
  warmupDurationSeconds: option(positive.optional(), {
    flag: 'warmup-duration',
    unit: 's',
    help: 'warmup time before profiling',
  }),
  /** `--request-cancellation-rate`: percent of requests the client cancels (0–100). */
  requestCancellationRatePct: option(z.number().min(0).max(100).optional(), {
    flag: 'request-cancellation-rate',
    unit: 'pct',
    help: 'percent of requests the client cancels',
  }),
  /** `--request-cancellation-delay`, s after sending (needs a cancellation rate). */
  requestCancellationDelaySeconds: option(z.number().min(0).optional(), {
    flag: 'request-cancellation-delay',
    unit: 's',
    help: 'cancel this long after sending (needs --request-cancellation-rate)',
    defaultText: '0',
  }),
  /** `--goodput` SLOs, e.g. `time_to_first_token:300 inter_token_latency:20` (ms). */
  goodput: option(z.string().optional(), {
    flag: 'goodput',
    unit: 'slos',
    help: 'SLOs, e.g. "time_to_first_token:300 inter_token_latency:20" (ms)',
  }),
  ...gateFields,
  ...userCentricFields,
  ...warmupLoadFields,
  ...shardFields,
};
