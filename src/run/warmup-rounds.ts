/**
 * The warm-up phase against the server (`--warmup-request-count`, `--warmup-duration`,
 * `--num-warmup-sessions`): one round, or with `--warmup-until-cached` round after round, each the
 * same warm-up again (the same sessions in the same order, so from the second round on every prompt
 * repeats one the server has seen), until a round in which the server reports cached prompt tokens
 * (`usage.prompt_tokens_details.cached_tokens` > 0) for at least one request, or until
 * `--warmup-max-rounds`. An answer without `cached_tokens` is unknown, not 0: a server that never
 * reports it is said to, not counted as a cold cache. Every round's records fold into one warm-up
 * summary (`warmup_metrics`).
 */
import type { SummaryBuilder } from '../metrics/summary.js';
import type { RunContext } from './context.js';
import { type PhaseResult, runPhase } from './phase.js';
import { buildStrategy, describePhase, warmupLimits } from './strategy-factory.js';

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
}

/** The warm-up's outcome: its phase (every round's records in one summary) and the rounds' report. */
export interface WarmupOutcome {
  phase: PhaseResult;
  /** Null without `--warmup-until-cached`. */
  untilCached: UntilCachedReport | null;
}

/** One round's counts: its requests, the answers carrying `cached_tokens`, and those > 0. */
interface RoundCounts {
  requests: number;
  reporting: number;
  cached: number;
}

/** The counts of what `summary` gained since `before` (its count and its `cached_tokens` values). */
function roundCounts(summary: SummaryBuilder, before: { count: number; reported: number }): RoundCounts {
  const values = summary.valuesOf('usage_cached_tokens').slice(before.reported);
  return {
    requests: summary.count - before.count,
    reporting: values.length,
    cached: values.filter((v) => v > 0).length,
  };
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
  const total: RoundCounts = { requests: 0, reporting: 0, cached: 0 };
  let cachedIn: number | null = null;
  for (let round = 1; round <= (maxRounds ?? 1); round++) {
    const strategy = buildStrategy(ctx.config, ctx.dataset, limits, 'warmup');
    const of = maxRounds === null ? '' : ` (round ${round} of at most ${maxRounds})`;
    ctx.env.log.info(`warmup: ${describePhase(strategy, limits)}${of}`);
    const into = rounds[rounds.length - 1]?.summary;
    const before = {
      count: into?.count ?? 0,
      reported: into?.valuesOf('usage_cached_tokens').length ?? 0,
    };
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
    if (counts.cached > 0) {
      cachedIn = round;
      break;
    }
    if (ctx.env.stopSignal.aborted) break;
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
 * round 2 of at most 3 (…)`, or that it never did, and whether it never carried the field at all.
 */
export function untilCachedLine(r: UntilCachedReport): string {
  const rounds = `${r.rounds} ${r.rounds === 1 ? 'round' : 'rounds'}`;
  if (r.cached_in_round !== null)
    return `Warm-up: the server reported cached tokens in round ${r.cached_in_round} of at most ${r.max_rounds} (--warmup-until-cached; ${r.with_cached_tokens} of the ${r.requests} warm-up requests of ${rounds} answered with usage.prompt_tokens_details.cached_tokens > 0)`;
  const why =
    r.reporting_cached_tokens === 0
      ? `none of the ${r.requests} answers carried usage.prompt_tokens_details.cached_tokens (unknown, not 0: the server may not report it)`
      : `cached_tokens was 0 in all ${r.reporting_cached_tokens} answers that carried it, of ${r.requests} (its prefix cache may be off, or evict before a repeat)`;
  // Fewer rounds than the most, and no cached tokens: only a stop (Ctrl-C, SIGTERM) ends the rounds early.
  const stopped = r.rounds < r.max_rounds ? ' (the run was stopped)' : '';
  return `Warm-up: the server never reported cached tokens in ${rounds}${stopped} of the same warm-up requests (--warmup-until-cached, at most ${r.max_rounds}): ${why}; the profiling phase starts without a confirmed warm cache`;
}
