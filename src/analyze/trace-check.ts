/**
 * The trace check (`tokenload analyze-trace --check`, and the start of `tokenload profile` on a
 * trace): what in a trace would make its replay measure something other than its traffic, each a
 * {@link TraceCheckFinding} with a count, an explanation and what to do. Rows are fed one at a time
 * ({@link TraceChecker.add}); memory is counters, one run length and a fixed histogram
 * (analyze/arrival-histogram.ts), whatever the trace's length.
 */
import { sessionShard } from '../dataset/shard.js';
import type { SkipCounts, Turn } from '../dataset/types.js';
import { ArrivalHistogram } from './arrival-histogram.js';
import {
  checkFinding,
  type RowCounts,
  type TraceCheckFinding,
  type TraceCheckName,
  type TraceCheckOptions,
  type TraceCheckReport,
  type TraceCheckSkip,
} from './trace-check-findings.js';

/** Whole-second test tolerance, seconds (stamps are rounded to the ns by the loaders). */
const WHOLE_SECOND_EPSILON_S = 1e-6;

/** Feeds rows in file order; {@link TraceChecker.report} gives the findings. */
export class TraceChecker {
  private readonly arrivals = new ArrivalHistogram();
  private readonly counts: RowCounts;
  private readonly shardRequests: number[];
  private previousMs: number | null = null;
  private runLength = 1;

  constructor(private readonly options: TraceCheckOptions = {}) {
    this.shardRequests = new Array<number>(Math.max(0, options.shardCount ?? 0)).fill(0);
    this.counts = {
      rows: 0,
      wholeSecondStamps: 0,
      sharedStampRows: 0,
      largestBurst: 1,
      zeroInput: 0,
      zeroOutput: 0,
      overContext: 0,
      unsizedRows: 0,
      developerRows: 0,
      shardRequests: this.shardRequests,
    };
  }

  /** Adds one row: its session id (for the shard it goes to) and its turn. */
  add(sessionId: string, turn: Turn): void {
    const c = this.counts;
    c.rows += 1;
    if (turn.timestampMs !== undefined)
      this.addStamp(turn.timestampMs * (this.options.speedupRatio ?? 1), turn);
    this.addLengths(turn);
    if (hasDeveloperMessage(turn)) c.developerRows += 1;
    const n = this.shardRequests.length;
    if (n > 1) {
      const s = sessionShard(sessionId, n);
      this.shardRequests[s] = (this.shardRequests[s] ?? 0) + 1;
    }
  }

  /**
   * The findings over the rows added, with the loader's drop counts (`skipped`: BurstGPT's rows of 0
   * tokens, Bailian's repeated `chat_id`s).
   */
  report(skipped: SkipCounts): TraceCheckReport {
    const findings: TraceCheckFinding[] = [];
    const notRun: TraceCheckSkip[] = [];
    const names: TraceCheckName[] = [
      'quantised_timestamps',
      'zero_token_rows',
      'over_context',
      'quiet_start',
      'long_gap',
      'duplicate_ids',
      'developer_role',
      'uneven_shards',
    ];
    for (const name of names) {
      const outcome = checkFinding(name, this.counts, this.arrivals, skipped, this.options);
      if (outcome === null) continue;
      if ('reason' in outcome) notRun.push(outcome);
      else findings.push(outcome);
    }
    return { rows: this.counts.rows, findings, skipped: notRun };
  }

  private addStamp(tsMs: number, turn: Turn): void {
    const c = this.counts;
    this.arrivals.add(tsMs, turn.source.line);
    const s = tsMs / 1000;
    if (Math.abs(s - Math.round(s)) < WHOLE_SECOND_EPSILON_S) c.wholeSecondStamps += 1;
    if (this.previousMs === tsMs) {
      this.runLength += 1;
      c.sharedStampRows += this.runLength === 2 ? 2 : 1;
      c.largestBurst = Math.max(c.largestBurst, this.runLength);
    } else this.runLength = 1;
    this.previousMs = tsMs;
  }

  private addLengths(turn: Turn): void {
    const c = this.counts;
    const p = turn.prompt;
    if (p.kind === 'synthetic' && p.inputLength === 0) c.zeroInput += 1;
    if (turn.maxTokens === 0) c.zeroOutput += 1;
    const context = this.options.maxContextLength;
    if (context === undefined) return;
    if (p.kind !== 'synthetic') {
      c.unsizedRows += 1;
      return;
    }
    if (p.inputLength + (turn.maxTokens ?? 0) > context) c.overContext += 1;
  }
}

/** Whether a turn's messages hold one with the `developer` role. */
export function hasDeveloperMessage(turn: Turn): boolean {
  return turn.prompt.kind === 'messages' && turn.prompt.messages.some((m) => m.role === 'developer');
}

/**
 * The summary's `trace_check` section, snake_case: `rows`, `findings` (`check`, `count`, `message`,
 * `advice`), `skipped` (`check`, `reason`) and `read_error` (the bad row that ended the check of a
 * streamed trace, else null) of the check (all null when `--no-trace-check`), and
 * `developer_role_rewritten` (rows whose `developer` messages went as `system`; null without
 * `--developer-role-as-system`).
 */
export function traceCheckSection(
  report: TraceCheckReport | null,
  developerRoleRewritten: number | null,
): Record<string, unknown> {
  return {
    rows: report?.rows ?? null,
    findings:
      report?.findings.map((f) => ({
        check: f.check,
        count: f.count,
        message: f.message,
        advice: f.advice,
      })) ?? null,
    skipped: report?.skipped.map((s) => ({ check: s.check, reason: s.reason })) ?? null,
    read_error: report?.readError ?? null,
    developer_role_rewritten: developerRoleRewritten,
  };
}

/** One console or summary warning line of a finding: `trace check: <message>; <advice>`. */
export function findingWarning(f: TraceCheckFinding): string {
  return `trace check (${f.check}): ${f.message}; ${f.advice}`;
}
