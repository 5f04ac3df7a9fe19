/**
 * The warm-up phase against the server (`--warmup-request-count`, `--warmup-duration`,
 * `--num-warmup-sessions`): one round, or with `--warmup-until-cached` round after round, each the
 * same warm-up again (the same sessions in the same order, so from the second round on every prompt
 * repeats one the server has seen), until a round in which the server reports cached prompt tokens
 * (`usage.prompt_tokens_details.cached_tokens` > 0) for at least one request, until a round whose
 * answers carried no `cached_tokens` at all (unknown, not 0: a server that does not report it
 * cannot say its cache is warm, so more rounds would tell nothing), or until `--warmup-max-rounds`.
 * Every round's records fold into one warm-up summary (`warmup_metrics`).
 */
import type { SummaryBuilder } from '../metrics/summary.js';
import type { RunContext } from './context.js';
import { type PhaseResult, runPhase } from './phase.js';
import { buildStrategy, describePhase, warmupLimits } from './strategy-factory.js';

/**
 * Why the rounds of `--warmup-until-cached` stopped: the server reported cached tokens; a round's
 * answers carried no `cached_tokens` at all (the server does not report it); `--warmup-max-rounds`
 * reached; or the run was stopped (Ctrl-C, SIGTERM).
 */
export type UntilCachedStop =
  | 'cached_tokens_reported'
  | 'no_cached_tokens_reported'
  | 'max_rounds'
  | 'interrupted';

/** `load.warmup.until_cached` of the summary: what `--warmup-until-cached` saw. */
export interface UntilCachedReport {
  /** `--warmup-max-rounds`. */
  max_rounds: number;
  /** Rounds run (fewer than the most when the server reported cached tokens, or the run was stopped). */
  rounds: number;
  /** The round in which the server first reported cached tokens (1-based); null: it never did. */
  cached_in_round: number | null;
  /** Warm-up requests over every round run. */
  requests: number;
  /** Of those, answers carrying `usage.prompt_tokens_details.cached_tokens` (absent: unknown). */
  reporting_cached_tokens: number;
  /** Of those, answers with `cached_tokens` > 0. */
  with_cached_tokens: number;
  /** Why the rounds stopped ({@link UntilCachedStop}). */
  stopped: UntilCachedStop;
}

/** The warm-up's outcome: its phase (every round's records in one summary) and the rounds' report. */
export interface WarmupOutcome {
  phase: PhaseResult;
  /** Null without `--warmup-until-cached`. */
  untilCached: UntilCachedReport | null;
}

/** One round's counts: its requests, those answered, the answers carrying `cached_tokens`, and those > 0. */
interface RoundCounts {
  requests: number;
  answered: number;
  reporting: number;
  cached: number;
}

/** Where a summary stood before a round: its records, successful ones, and `cached_tokens` values. */
interface Mark {
  count: number;
  answered: number;
  reported: number;
}

function markOf(summary: SummaryBuilder | undefined): Mark {
  return {
    count: summary?.count ?? 0,
    answered: summary?.validCount ?? 0,
    reported: summary?.valuesOf('usage_cached_tokens').length ?? 0,
  };
}

/** The counts of what `summary` gained since `before`. */
function roundCounts(summary: SummaryBuilder, before: Mark): RoundCounts {
  const values = summary.valuesOf('usage_cached_tokens').slice(before.reported);
  return {
    requests: summary.count - before.count,
    answered: summary.validCount - before.answered,
    reporting: values.length,
    cached: values.filter((v) => v > 0).length,
  };
}

/**
 * Why to stop after a round, or null to run another: cached tokens reported; answers but none
 * carrying `cached_tokens` (a round of failures only says nothing of the field); the run stopped.
 */
function stopAfter(counts: RoundCounts, aborted: boolean): UntilCachedStop | null {
  if (counts.cached > 0) return 'cached_tokens_reported';
  if (counts.answered > 0 && counts.reporting === 0) return 'no_cached_tokens_reported';
  return aborted ? 'interrupted' : null;
}

/**
 * Runs the warm-up phase (rounds with `--warmup-until-cached`) and logs each round; null when no
 * warm-up was asked for. Never throws for request failures (they are records).
 */
export async function runWarmup(ctx: RunContext): Promise<WarmupOutcome | null> {
  const limits = warmupLimits(ctx.config);
  if (limits === null) return null;
  const maxRounds = ctx.config.warmup?.untilCached?.maxRounds ?? null;
  const rounds: PhaseResult[] = [];
  const total: RoundCounts = { requests: 0, answered: 0, reporting: 0, cached: 0 };
  let cachedIn: number | null = null;
  let stopped: UntilCachedStop = 'max_rounds';
  for (let round = 1; round <= (maxRounds ?? 1); round++) {
    const strategy = buildStrategy(ctx.config, ctx.dataset, limits, 'warmup');
    const of = maxRounds === null ? '' : ` (round ${round} of at most ${maxRounds})`;
    ctx.env.log.info(`warmup: ${describePhase(strategy, limits)}${of}`);
    const into = rounds[rounds.length - 1]?.summary;
    const before = markOf(into);
    const result = await runPhase(ctx, 'warmup', strategy, limits, into);
    rounds.push(result);
    const counts = roundCounts(result.summary, before);
    total.requests += counts.requests;
    total.reporting += counts.reporting;
    total.cached += counts.cached;
    if (maxRounds === null) break;
    ctx.env.log.info(
      `warmup round ${round}: ${counts.requests} requests, ${counts.reporting} answers carried usage.prompt_tokens_details.cached_tokens, ${counts.cached} of them > 0`,
    );
    const stop = stopAfter(counts, ctx.env.stopSignal.aborted);
    if (stop === null) continue;
    stopped = stop;
    if (stop === 'cached_tokens_reported') cachedIn = round;
    if (stop === 'no_cached_tokens_reported')
      ctx.env.log.info(
        `warmup: the server reports no cached_tokens, so --warmup-until-cached cannot tell when its cache is warm: stopped after round ${round}`,
      );
    break;
  }
  const phase = mergedRounds(rounds);
  ctx.env.log.info(
    `warmup: ${phase.load.issued} requests sent, at most ${phase.mostInFlight} in flight at once`,
  );
  if (maxRounds === null) return { phase, untilCached: null };
  return {
    phase,
    untilCached: {
      max_rounds: maxRounds,
      rounds: rounds.length,
      cached_in_round: cachedIn,
      requests: total.requests,
      reporting_cached_tokens: total.reporting,
      with_cached_tokens: total.cached,
      stopped,
    },
  };
}

/** The rounds as one warm-up phase: the last round's result, from the first's start, their sends summed. */
function mergedRounds(rounds: readonly PhaseResult[]): PhaseResult {
  const first = rounds[0];
  const last = rounds[rounds.length - 1];
  if (first === undefined || last === undefined) throw new Error('a warm-up runs at least one round');
  const issued = rounds.reduce((sum, r) => sum + r.load.issued, 0);
  const mostInFlight = rounds.reduce((most, r) => Math.max(most, r.mostInFlight), 0);
  return { ...last, startTime: first.startTime, load: { ...last.load, issued }, mostInFlight };
}

/**
 * The console line of `--warmup-until-cached`, e.g. `Warm-up: the server reported cached tokens in
 * round 2 of at most 3 (…)`, that it reports no `cached_tokens` (the rounds stopped after the first
 * that showed it), or that it never reported any above 0.
 */
export function untilCachedLine(r: UntilCachedReport): string {
  const rounds = `${r.rounds} ${r.rounds === 1 ? 'round' : 'rounds'}`;
  if (r.stopped === 'no_cached_tokens_reported')
    return `Warm-up: the server reports no cached_tokens, so --warmup-until-cached cannot tell when its cache is warm: stopped after round ${r.rounds} of at most ${r.max_rounds} (none of its answers carried usage.prompt_tokens_details.cached_tokens: unknown, not 0); the profiling phase starts without a confirmed warm cache`;
  if (r.cached_in_round !== null)
    return `Warm-up: the server reported cached tokens in round ${r.cached_in_round} of at most ${r.max_rounds} (--warmup-until-cached; ${r.with_cached_tokens} of the ${r.requests} warm-up requests of ${rounds} answered with usage.prompt_tokens_details.cached_tokens > 0)`;
  const why =
    r.reporting_cached_tokens === 0
      ? `none of the ${r.requests} answers carried usage.prompt_tokens_details.cached_tokens (unknown, not 0: the server may not report it)`
      : `cached_tokens was 0 in all ${r.reporting_cached_tokens} answers that carried it, of ${r.requests} (its prefix cache may be off, or evict before a repeat)`;
  const stopped = r.stopped === 'interrupted' ? ' (the run was stopped)' : '';
  return `Warm-up: the server never reported cached tokens in ${rounds}${stopped} of the same warm-up requests (--warmup-until-cached, at most ${r.max_rounds}): ${why}; the profiling phase starts without a confirmed warm cache`;
}
