/**
 * Load options beyond the basic rate and concurrency, with AIPerf's names and meanings: the prefill
 * gate (`--prefill-concurrency`), user-centric timing (`--user-centric-rate` with `--num-users`),
 * and the warm-up phase's own load settings (`--warmup-concurrency`, …), each of which defaults to
 * the profiling phase's value (AIPerf's docs/tutorials/warmup.md, prefill-concurrency.md,
 * user-centric-timing.md). Part of `--help`'s "Load:" group.
 */
import { z } from 'zod';
import { ARRIVAL_PATTERNS } from '../timing/arrivals.js';
import { option } from '../util/option-meta.js';
import { int, positive } from './field-kinds.js';

/** Prefill gate options. */
export const gateFields = {
  /** `--prefill-concurrency`: requests between send and first token at once (needs `--streaming`). */
  prefillConcurrency: option(int(1).optional(), {
    flag: 'prefill-concurrency',
    unit: 'n',
    help: 'at most n requests between their send and their first token (needs --streaming); the wait for a slot is the record’s prefill_wait',
  }),
  /** `--prefill-concurrency-ramp-duration`, s: the prefill slots open one by one over this time. */
  prefillConcurrencyRampSeconds: option(positive.optional(), {
    flag: 'prefill-concurrency-ramp-duration',
    unit: 's',
    help: 'open the prefill slots from 1 to --prefill-concurrency over this time',
  }),
};

/** User-centric timing options (AIPerf's docs/tutorials/user-centric-timing.md). */
export const userCentricFields = {
  /** `--user-centric-rate`, requests/s over all users: each user's turns `--num-users / rate` apart. */
  userCentricRate: option(positive.optional(), {
    flag: 'user-centric-rate',
    unit: 'r',
    help: 'requests/s over all users; each user sends a turn every --num-users / r seconds (needs --num-users)',
  }),
  /** `--num-users`: simulated users of `--user-centric-rate`, each one session at a time. */
  numUsers: option(int(1).optional(), {
    flag: 'num-users',
    unit: 'n',
    help: 'users of --user-centric-rate, each running one multi-turn session at a time',
  }),
};

/** Default of `--warmup-max-rounds`: the first round fills the cache, the second and third repeat it. */
export const DEFAULT_WARMUP_MAX_ROUNDS = 3;

/** The warm-up phase's own load settings; each absent one takes the profiling phase's. */
export const warmupLoadFields = {
  /**
   * `--warmup-until-cached` (ours): repeat the warm-up, the same requests again, until the server
   * reports cached prompt tokens (`usage.prompt_tokens_details.cached_tokens` > 0) for one of them.
   */
  warmupUntilCached: option(z.boolean().default(false), {
    flag: 'warmup-until-cached',
    help: 'repeat the warm-up (the same requests again) until the server reports cached prompt tokens (usage.prompt_tokens_details.cached_tokens > 0), at most --warmup-max-rounds times',
  }),
  /** `--warmup-max-rounds` (ours): the most warm-up rounds `--warmup-until-cached` runs. */
  warmupMaxRounds: option(int(1).optional(), {
    flag: 'warmup-max-rounds',
    unit: 'n',
    help: 'the most warm-up rounds --warmup-until-cached runs',
    defaultText: String(DEFAULT_WARMUP_MAX_ROUNDS),
  }),
  /** `--num-warmup-sessions`: the warm-up ends once this many sessions are done. */
  numWarmupSessions: option(int(1).optional(), {
    flag: 'num-warmup-sessions',
    unit: 'n',
    help: 'warm up with this many whole sessions (not in the metrics)',
  }),
  /** `--warmup-concurrency`. */
  warmupConcurrency: option(int(1).optional(), {
    flag: 'warmup-concurrency',
    unit: 'n',
    help: 'concurrent sessions during the warm-up',
    defaultText: '--concurrency',
  }),
  /** `--warmup-request-rate`, requests/s. */
  warmupRequestRate: option(positive.optional(), {
    flag: 'warmup-request-rate',
    unit: 'r',
    help: 'requests/s during the warm-up',
    defaultText: '--request-rate',
  }),
  /** `--warmup-arrival-pattern`. */
  warmupArrivalPattern: option(z.enum(ARRIVAL_PATTERNS).optional(), {
    flag: 'warmup-arrival-pattern',
    unit: 'p',
    help: 'inter-arrival distribution during the warm-up',
    defaultText: '--arrival-pattern',
  }),
  /** `--warmup-prefill-concurrency`. */
  warmupPrefillConcurrency: option(int(1).optional(), {
    flag: 'warmup-prefill-concurrency',
    unit: 'n',
    help: 'prefill slots during the warm-up (needs --streaming)',
    defaultText: '--prefill-concurrency',
  }),
  /** `--warmup-grace-period`, s: after `--warmup-duration`, wait this long for warm-up answers. */
  warmupGracePeriodSeconds: option(z.number().min(0).optional(), {
    flag: 'warmup-grace-period',
    unit: 's',
    help: 'after --warmup-duration, wait at most this long for warm-up answers, then cancel them',
    defaultText: 'no limit',
  }),
  /** `--warmup-concurrency-ramp-duration`, s. */
  warmupConcurrencyRampSeconds: option(positive.optional(), {
    flag: 'warmup-concurrency-ramp-duration',
    unit: 's',
    help: 'open the warm-up’s concurrency slots over this time',
    defaultText: '--concurrency-ramp-duration',
  }),
  /** `--warmup-prefill-concurrency-ramp-duration`, s. */
  warmupPrefillConcurrencyRampSeconds: option(positive.optional(), {
    flag: 'warmup-prefill-concurrency-ramp-duration',
    unit: 's',
    help: 'open the warm-up’s prefill slots over this time',
    defaultText: '--prefill-concurrency-ramp-duration',
  }),
  /** `--warmup-request-rate-ramp-duration`, s. */
  warmupRequestRateRampSeconds: option(positive.optional(), {
    flag: 'warmup-request-rate-ramp-duration',
    unit: 's',
    help: 'raise the warm-up’s rate linearly over this time',
    defaultText: '--request-rate-ramp-duration',
  }),
};
