/**
 * The cross-field rules of the warm-up's load options, the prefill gate and user-centric timing
 * (`./fields-phase-load.ts`), with AIPerf's constraints (docs/tutorials/warmup.md,
 * prefill-concurrency.md, user-centric-timing.md).
 */
import { ENDPOINTS } from '../endpoint/registry.js';
import type { ConfigRule, RuleInput } from './rule-types.js';

const rule = (option: string, check: (c: RuleInput) => string | null): ConfigRule => ({ option, check });
const when = (cond: boolean, message: string): string | null => (cond ? message : null);

/** The `--warmup-*` load options given, as typed. */
function warmupLoadFlags(c: RuleInput): string[] {
  const given: Array<[unknown, string]> = [
    [c.warmupConcurrency, '--warmup-concurrency'],
    [c.warmupRequestRate, '--warmup-request-rate'],
    [c.warmupArrivalPattern, '--warmup-arrival-pattern'],
    [c.warmupPrefillConcurrency, '--warmup-prefill-concurrency'],
    [c.warmupGracePeriodSeconds, '--warmup-grace-period'],
    [c.warmupConcurrencyRampSeconds, '--warmup-concurrency-ramp-duration'],
    [c.warmupPrefillConcurrencyRampSeconds, '--warmup-prefill-concurrency-ramp-duration'],
    [c.warmupRequestRateRampSeconds, '--warmup-request-rate-ramp-duration'],
  ];
  return given.filter(([v]) => v !== undefined).map(([, flag]) => flag);
}

const warmupAsked = (c: RuleInput): boolean =>
  c.warmupRequestCount !== undefined ||
  c.warmupDurationSeconds !== undefined ||
  c.numWarmupSessions !== undefined;

const warmupRules: ConfigRule[] = [
  rule('--num-warmup-sessions', (c) =>
    when(
      c.numWarmupSessions !== undefined && c.warmupRequestCount !== undefined,
      '--num-warmup-sessions and --warmup-request-count cannot be combined (AIPerf’s rule): give one.',
    ),
  ),
  rule('--warmup-concurrency', (c) => {
    const flags = warmupLoadFlags(c);
    return when(
      flags.length > 0 && !warmupAsked(c),
      `${flags.join(', ')} set the warm-up's load, but no warm-up was asked for: add --warmup-request-count, --warmup-duration or --num-warmup-sessions.`,
    );
  }),
  rule('--warmup-until-cached', (c) =>
    when(
      c.warmupUntilCached && !warmupAsked(c),
      '--warmup-until-cached repeats a warm-up, but no warm-up was asked for: add --warmup-request-count, --warmup-duration or --num-warmup-sessions.',
    ),
  ),
  rule('--warmup-max-rounds', (c) =>
    when(
      c.warmupMaxRounds !== undefined && !c.warmupUntilCached,
      '--warmup-max-rounds requires --warmup-until-cached (it caps its rounds).',
    ),
  ),
  rule('--warmup-grace-period', (c) =>
    when(
      c.warmupGracePeriodSeconds !== undefined && c.warmupDurationSeconds === undefined,
      '--warmup-grace-period requires --warmup-duration (it bounds the wait for warm-up answers after the duration ends).',
    ),
  ),
  rule('--warmup-arrival-pattern', (c) =>
    when(
      c.warmupArrivalPattern !== undefined && (c.warmupRequestRate ?? c.requestRate) === undefined,
      '--warmup-arrival-pattern requires --warmup-request-rate or --request-rate.',
    ),
  ),
  rule('--warmup-request-rate-ramp-duration', (c) =>
    when(
      c.warmupRequestRateRampSeconds !== undefined && (c.warmupRequestRate ?? c.requestRate) === undefined,
      '--warmup-request-rate-ramp-duration requires --warmup-request-rate or --request-rate.',
    ),
  ),
];

/** The prefill problem of one phase: its limit against streaming, its session cap and the workers. */
function prefillProblem(
  c: RuleInput,
  flag: string,
  limit: number | undefined,
  cap: { value: number | undefined; flag: string },
): string | null {
  if (limit === undefined) return null;
  if (!(c.streaming && ENDPOINTS[c.endpointType].streamable))
    return `${flag} needs --streaming (a streamable --endpoint-type): a prefill slot is released by the first token, which only a streamed answer shows.`;
  if (cap.value !== undefined && limit > cap.value)
    return `${flag} ${limit} must be <= ${cap.flag} ${cap.value}: a request in prefill is one of the sessions in flight.`;
  // `--workers auto` stays single-process with a prefill gate (run/workers-auto.ts).
  if (typeof c.workers === 'number' && c.workers > 1)
    return `${flag} is not implemented with --workers > 1 yet (the first token is seen in a worker thread); drop --workers, or use --workers auto.`;
  return null;
}

const prefillRules: ConfigRule[] = [
  rule('--prefill-concurrency', (c) =>
    prefillProblem(c, '--prefill-concurrency', c.prefillConcurrency, {
      value: c.concurrency,
      flag: '--concurrency',
    }),
  ),
  rule('--warmup-prefill-concurrency', (c) =>
    prefillProblem(c, '--warmup-prefill-concurrency', c.warmupPrefillConcurrency, {
      value: c.warmupConcurrency ?? c.concurrency,
      flag: c.warmupConcurrency === undefined ? '--concurrency' : '--warmup-concurrency',
    }),
  ),
  rule('--prefill-concurrency-ramp-duration', (c) =>
    when(
      c.prefillConcurrencyRampSeconds !== undefined && c.prefillConcurrency === undefined,
      '--prefill-concurrency-ramp-duration requires --prefill-concurrency.',
    ),
  ),
  rule('--warmup-prefill-concurrency-ramp-duration', (c) =>
    when(
      c.warmupPrefillConcurrencyRampSeconds !== undefined &&
        (c.warmupPrefillConcurrency ?? c.prefillConcurrency) === undefined,
      '--warmup-prefill-concurrency-ramp-duration requires --warmup-prefill-concurrency or --prefill-concurrency.',
    ),
  ),
];

/** Options user-centric timing cannot be combined with (AIPerf's user-centric-timing.md, timing-modes-reference.md). */
function userCentricConflict(c: RuleInput, fixedSchedule: boolean): string | null {
  if (c.requestRate !== undefined)
    return '--request-rate (user-centric timing sets the rate: --user-centric-rate)';
  if (fixedSchedule) return 'a fixed schedule (--no-fixed-schedule to drive a timestamped trace by users)';
  if (c.shardCount !== undefined) return '--shard-count (not implemented for user-centric timing)';
  return null;
}

/** The rules of `--user-centric-rate` and `--num-users`; `fixedSchedule` tells whether the run replays timestamps. */
export function userCentricRules(fixedSchedule: (c: RuleInput) => boolean): ConfigRule[] {
  return [
    rule('--user-centric-rate', (c) =>
      when(
        c.userCentricRate !== undefined && c.numUsers === undefined,
        '--user-centric-rate requires --num-users.',
      ),
    ),
    rule('--num-users', (c) =>
      when(
        c.numUsers !== undefined && c.userCentricRate === undefined,
        '--num-users requires --user-centric-rate.',
      ),
    ),
    rule('--user-centric-rate', (c) => {
      if (c.userCentricRate === undefined) return null;
      const conflict = userCentricConflict(c, fixedSchedule(c));
      return conflict === null ? null : `--user-centric-rate cannot be combined with ${conflict}.`;
    }),
    rule('--user-centric-rate', (c) =>
      when(
        c.userCentricRate !== undefined &&
          c.inputFile === undefined &&
          (c.synthetic?.sessionTurnsMean ?? 1) < 2,
        '--user-centric-rate needs multi-turn sessions: --session-turns-mean of at least 2 (AIPerf’s rule).',
      ),
    ),
  ];
}

/** The rules of the warm-up's load options and the prefill gate. */
export const PHASE_LOAD_RULES: readonly ConfigRule[] = [...warmupRules, ...prefillRules];
