/** The summary's sections beyond the metrics: warmup, pacing, replay, cut-off, client health, connections, ... */
import { traceCheckSection } from '../analyze/trace-check.js';
import type { SkipCounts } from '../dataset/types.js';
import type { Summary } from '../metrics/summary.js';
import type { TailsWithFailures } from '../metrics/tails.js';
import type { PacingFacts } from '../timing/session-pacing.js';
import type { StrategyReport } from '../timing/types.js';
import { type FinishInput, replayError } from './finish-input.js';

/** The sections of the summary JSON besides its metrics, each present only when it applies. */
export function extraSections(input: FinishInput, warmupSummary: Summary | null): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  if (warmupSummary !== null) extra.warmup_metrics = warmupSummary.metrics;
  const cut = input.profiling.cutoff;
  if (cut !== null && cut !== undefined) {
    extra.duration_cutoff = {
      in_flight_at_cutoff: cut.inFlightAtCutoff,
      completed_in_grace: cut.completedInGrace,
      cancelled_after_grace: cut.cancelledAfterGrace,
    };
  }
  if (input.tokenizer !== undefined) extra.tokenizer = input.tokenizer;
  if (input.shard) extra.shard = input.shard.section;
  extra.load = {
    strategy: input.strategy.name,
    description: input.profiling.description,
    ...(input.warmup === null
      ? {}
      : {
          warmup: {
            strategy: input.warmup.load.kind,
            description: input.warmup.description,
            issued: input.warmup.load.issued,
            most_in_flight: input.warmup.mostInFlight,
            ...(input.warmupUntilCached == null ? {} : { until_cached: input.warmupUntilCached }),
          },
        }),
  };
  if (input.profiling.clientHealth !== undefined) extra.client_health = input.profiling.clientHealth;
  if (input.profiling.connections !== undefined) extra.connections = input.profiling.connections;
  if (input.workersChoice !== undefined && input.workersChoice !== null)
    extra.client_workers = input.workersChoice;
  if (input.profiling.startUp !== undefined) extra.start_up = input.profiling.startUp;
  if (input.profiling.failureStop !== undefined) extra.failed_request_threshold = input.profiling.failureStop;
  if (input.profiling.servers !== undefined) extra.servers = input.profiling.servers;
  if (input.profiling.perTurn !== undefined) extra.per_turn = input.profiling.perTurn;
  const skipped = input.inputSkipped;
  if (skipped !== undefined && skipped !== null) extra.input_rows_skipped = skippedSection(skipped);
  const check = input.traceCheck;
  if (check != null && (check.report !== null || check.developerRewrites !== null))
    extra.trace_check = traceCheckSection(check.report, check.developerRewrites?.rows ?? null);
  return { ...extra, ...loadSection(input.profiling.load) };
}

/** The summary's `input_rows_skipped`: rows the loader dropped, by reason. */
function skippedSection(skipped: SkipCounts): Record<string, unknown> {
  return {
    before_start_offset: skipped.beforeStartOffset,
    after_end_offset: skipped.afterEndOffset,
    bad_lines: skipped.badLines,
    ...(skipped.invalidRows === undefined ? {} : { invalid_rows: skipped.invalidRows }),
    ...(skipped.zeroOutputRows === undefined ? {} : { zero_output_rows: skipped.zeroOutputRows }),
    unread_after_line: skipped.unreadAfterLine ?? null,
    ...synthesisCounts(skipped),
    ...sessionSampleSection(skipped),
  };
}

/** The trace synthesis counts of `input_rows_skipped`, each present when its option is set. */
function synthesisCounts(skipped: SkipCounts): Record<string, number> {
  const out: Record<string, number> = {};
  if (skipped.overMaxIsl !== undefined) out.over_max_isl = skipped.overMaxIsl;
  if (skipped.maxOslCapped !== undefined) out.max_osl_capped = skipped.maxOslCapped;
  if (skipped.promptUnscaled !== undefined) out.prompt_unscaled = skipped.promptUnscaled;
  return out;
}

/** `input_rows_skipped.session_sample`: what `--trace-session-sample-ratio` kept; absent without it. */
function sessionSampleSection(skipped: SkipCounts): Record<string, unknown> {
  const s = skipped.sessionSample;
  if (s === undefined) return {};
  return {
    session_sample: {
      ratio: s.ratio,
      seed: s.seed,
      sessions_read: s.sessionsRead,
      sessions_kept: s.sessionsKept,
      rows_read: s.rowsRead,
      rows_kept: s.rowsKept,
    },
  };
}

/** The summary section of the strategy's own facts: `replay` for a fixed schedule, `pacing` for a rate. */
function loadSection(load: StrategyReport): Record<string, unknown> {
  switch (load.kind) {
    case 'fixed_schedule':
      return {
        replay: {
          rows_read: load.replay.rowsRead,
          sessions: load.replay.sessions,
          branch_sessions: load.replay.branchSessions,
          zero_trace_ms: load.replay.zeroMs,
          out_of_order_sessions: load.replay.outOfOrderSessions,
          input_error: replayError(load.replay)?.message ?? null,
          ...pacingFields(load.replay.pacing),
        },
      };
    case 'request_rate':
      return {
        pacing: {
          achieved_request_rate: load.pacing.achievedRatePerS,
          schedule_reanchors: load.pacing.reanchors,
          skipped_arrivals: Math.round(load.pacing.skippedArrivals),
        },
      };
    case 'concurrency':
      return {};
    case 'user_centric':
      return {
        users: {
          opening: load.users.opening,
          started: load.users.started,
          turn_gap_s: load.users.turnGapS,
        },
      };
  }
}

/**
 * The replay section's pacing: `open_loop`, `turns_behind_answer` (open loop: later turns sent at
 * their previous answer's end, after their own time; null in closed loop) and `idle_gap_cap` (null
 * without `--trace-idle-gap-cap-seconds`).
 */
function pacingFields(pacing: PacingFacts): Record<string, unknown> {
  const cap = pacing.idleGapCap;
  const behind = pacing.behindAnswer;
  const ms = (v: number): number => Math.round(v * 1000) / 1000;
  return {
    open_loop: pacing.openLoop,
    turns_behind_answer:
      behind === null ? null : { count: behind.count, mean_ms: ms(behind.meanMs), max_ms: ms(behind.maxMs) },
    idle_gap_cap:
      cap === null
        ? null
        : {
            cap_s: cap.capMs / 1000,
            rows_capped: cap.rowsCapped,
            removed_ms: ms(cap.removedMs),
          },
  };
}

/** `tails_with_failures` of the profiling summary (metrics/tails.ts); empty when it has none. */
export function tailsSection(summary: Summary): { tails_with_failures?: TailsWithFailures } {
  const tails = summary.tails;
  return tails === undefined || tails === null ? {} : { tails_with_failures: tails.section };
}
