/**
 * The trace check's findings, from the counts {@link TraceChecker} (analyze/trace-check.ts) kept:
 * each check's threshold ({@link TRACE_CHECK_LIMITS}), its sentence with its figures and what to do.
 */
import type { SkipCounts } from '../dataset/types.js';
import type { ArrivalHistogram } from './arrival-histogram.js';

/**
 * The thresholds of the checks. A timestamp is on a whole second when it is within 1 µs of one.
 * - `wholeSecondShare`, `sharedStampShare`: `quantised_timestamps` fires when at least
 *   `wholeSecondShare` of the stamps are whole seconds and two or more rows share a stamp, or when at
 *   least `sharedStampShare` of the stamped rows, and at least `minSharedRows`, share theirs with the
 *   row next to them (a coarse clock whatever its step; a tie or two in a short trace is no clock);
 * - `windows`, `quietStartRatio`, `minRowsPerWindow`: the span is cut into `windows` equal windows
 *   (5 % each); `quiet_start` fires when the first carries fewer than `quietStartRatio` × the median
 *   window's requests, judged only when the median window holds at least `minRowsPerWindow` rows;
 * - `gapShare`, `minRowsForGap`: `long_gap` fires when two consecutive rows are more than `gapShare`
 *   of the span apart, in a trace of at least `minRowsForGap` stamped rows;
 * - `shardFactor`: `uneven_shards` fires when the largest shard gets more than `shardFactor` / n of
 *   the requests.
 */
export const TRACE_CHECK_LIMITS = {
  wholeSecondShare: 0.99,
  sharedStampShare: 0.1,
  minSharedRows: 10,
  windows: 20,
  quietStartRatio: 0.1,
  minRowsPerWindow: 10,
  gapShare: 0.1,
  minRowsForGap: 10,
  shardFactor: 1.5,
} as const;

/** The checks, as the summary's `trace_check.findings[].check` and the console name them. */
export type TraceCheckName =
  | 'quantised_timestamps'
  | 'zero_token_rows'
  | 'over_context'
  | 'quiet_start'
  | 'long_gap'
  | 'duplicate_ids'
  | 'developer_role'
  | 'uneven_shards';

/** One check that fired. */
export interface TraceCheckFinding {
  check: TraceCheckName;
  /** Rows (or, for `uneven_shards`, requests of the largest shard) the finding is about. */
  count: number;
  /** What was found and why it matters, one sentence with its figures. */
  message: string;
  /** What to do about it. */
  advice: string;
}

/** A check that could not run, and why. */
export interface TraceCheckSkip {
  check: TraceCheckName;
  reason: string;
}

/** What the check knows besides the rows. */
export interface TraceCheckOptions {
  /** The served model's context, tokens (`--max-context-length`); the `over_context` check needs it. */
  maxContextLength?: number | undefined;
  /** Where `maxContextLength` came from, for the message (default `--max-context-length`). */
  contextSource?: string | undefined;
  /** `--shard-count`: the `uneven_shards` check runs when it is above 1. */
  shardCount?: number | undefined;
  /**
   * The speedup ratio the rows' `timestampMs` were divided by (default 1): stamps are multiplied
   * back, so whole seconds are judged in the trace's own time.
   */
  speedupRatio?: number | undefined;
}

/** The result of a check. */
export interface TraceCheckReport {
  /** Rows checked (the rows a replay sends, after the loader's drops). */
  rows: number;
  findings: TraceCheckFinding[];
  skipped: TraceCheckSkip[];
  /** The bad row that ended a check told to tolerate one (`file:line: …`); absent when it read every row. */
  readError?: string;
}

/** What {@link TraceChecker} counted over the rows it was given. */
export interface RowCounts {
  rows: number;
  /** Stamps within 1 µs of a whole second (trace time). */
  wholeSecondStamps: number;
  /** Rows whose stamp equals the row above's or below's (runs of equal stamps, file order). */
  sharedStampRows: number;
  /** The longest run of rows with one stamp. */
  largestBurst: number;
  /** Synthetic prompts of 0 tokens, rows asking 0 output tokens. */
  zeroInput: number;
  zeroOutput: number;
  /** Synthetic rows whose input plus output length exceeds the context. */
  overContext: number;
  /** Rows whose prompt length is not known without tokenizing it (text, messages, payload). */
  unsizedRows: number;
  /** Rows whose messages hold a `developer` message. */
  developerRows: number;
  /** Requests per shard (empty without `--shard-count` above 1). */
  shardRequests: number[];
}

type Outcome = TraceCheckFinding | TraceCheckSkip | null;

function num(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/** `1 row`, `2 rows`: a count and its noun, plural unless the count is 1. */
function count(n: number, noun: string): string {
  return `${num(n)} ${noun}${n === 1 ? '' : 's'}`;
}

/** `verb` agreeing with a count: `asks` for 1, `ask` otherwise (`verb` given in the plural). */
function agree(n: number, plural: string, singular: string): string {
  return n === 1 ? singular : plural;
}

/** A duration in seconds from ms: whole seconds from 10 s, else 2 significant digits (0.15 s, 2.5 s). */
function seconds(ms: number): string {
  const s = ms / 1000;
  return s >= 10 ? num(s) : s.toLocaleString('en-US', { maximumSignificantDigits: 2 });
}

function quantised(c: RowCounts, a: ArrivalHistogram): Outcome {
  if (a.count === 0) return { check: 'quantised_timestamps', reason: 'no row has a timestamp' };
  const L = TRACE_CHECK_LIMITS;
  const wholeSeconds = c.wholeSecondStamps >= L.wholeSecondShare * a.count && c.sharedStampRows > 0;
  const coarse = c.sharedStampRows >= Math.max(L.sharedStampShare * a.count, L.minSharedRows);
  if (!wholeSeconds && !coarse) return null;
  const pct = num((100 * c.sharedStampRows) / a.count, 1);
  return {
    check: 'quantised_timestamps',
    count: c.sharedStampRows,
    message: `${num(c.sharedStampRows)} of ${num(a.count)} timestamped rows (${pct} %) share their stamp with the row next to them (largest burst: ${num(c.largestBurst)} rows at one stamp; ${count(c.wholeSecondStamps, 'stamp')} on a whole second): the trace's clock is coarse, and a replay sends each stamp's rows at the same instant, bursts the original traffic spread between stamps`,
    advice:
      'read the results as bursty load, or replay the lengths at a steady rate (--request-rate with the trace file and no --fixed-schedule)',
  };
}

function zeroTokens(c: RowCounts, skipped: SkipCounts): Outcome {
  const droppedInput = skipped.invalidRows ?? 0;
  const keptOutput = skipped.zeroOutputRows ?? 0;
  const n = c.zeroInput + c.zeroOutput + droppedInput + keptOutput;
  if (n === 0) return null;
  const parts: string[] = [];
  if (droppedInput > 0) parts.push(`${num(droppedInput)} with 0 input tokens dropped by the loader`);
  if (keptOutput > 0)
    parts.push(`${num(keptOutput)} with 0 output tokens sent asking for 1 (a failed request in the trace)`);
  if (c.zeroInput > 0) parts.push(`${num(c.zeroInput)} with a 0-token prompt`);
  if (c.zeroOutput > 0) parts.push(`${num(c.zeroOutput)} asking for 0 output tokens`);
  return {
    check: 'zero_token_rows',
    count: n,
    message: `${count(n, 'row')} ${agree(n, 'have', 'has')} 0 input or 0 output tokens (${parts.join(', ')}): they were empty or failed requests in the original service`,
    advice:
      'remove them from the file if they should not count as load; the counts above say what the replay does with each',
  };
}

function overContext(c: RowCounts, o: TraceCheckOptions): Outcome {
  const context = o.maxContextLength;
  if (context === undefined)
    return { check: 'over_context', reason: 'the model’s context is not known (give --max-context-length)' };
  if (c.overContext === 0) return null;
  const unsized =
    c.unsizedRows > 0
      ? ` (${num(c.unsizedRows)} text or message ${agree(c.unsizedRows, 'rows', 'row')} not sized)`
      : '';
  return {
    check: 'over_context',
    count: c.overContext,
    message: `${count(c.overContext, 'row')} ${agree(c.overContext, 'ask', 'asks')} for more than the ${num(context)}-token context (${o.contextSource ?? '--max-context-length'}; input plus output length)${unsized}: a server refuses them (vLLM: HTTP 400)`,
    advice: 'cap them with --synthesis-max-isl / --synthesis-max-osl, or serve a model with a longer context',
  };
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

function quietStart(a: ArrivalHistogram): Outcome {
  const L = TRACE_CHECK_LIMITS;
  if (a.spanMs === 0) return { check: 'quiet_start', reason: 'the trace spans no time' };
  const { widthMs, counts } = a.windows(L.windows);
  const typical = median(counts);
  if (typical < L.minRowsPerWindow)
    return {
      check: 'quiet_start',
      reason: `too few rows: the median 5 % window holds ${num(typical, 1)} rows (needs ${L.minRowsPerWindow})`,
    };
  const first = counts[0] ?? 0;
  if (first >= L.quietStartRatio * typical) return null;
  const perS = (n: number): string => num(n / (widthMs / 1000), 3);
  const times = first === 0 ? 'no request at all' : `${num(typical / first, 1)}× fewer requests`;
  return {
    check: 'quiet_start',
    count: first,
    message: `the first 5 % of the span (${seconds(widthMs)} s) sends ${count(first, 'request')} (${perS(first)}/s), ${times} than the median 5 % window (${num(typical, 1)}, ${perS(typical)}/s): the replay starts with a near-idle server`,
    advice: `skip it with --fixed-schedule-start-offset ${Math.ceil((a.firstMs ?? 0) + widthMs)} (trace ms), or leave the start out of the figures you compare`,
  };
}

/** `N s`, and with a speedup ratio the replay's own time beside it: `21 s of trace time (21 ms at --synthesis-speedup-ratio 1000)`. */
function traceSeconds(ms: number, speedupRatio: number | undefined): string {
  const ratio = speedupRatio ?? 1;
  if (ratio === 1) return `${seconds(ms)} s`;
  const replayMs = ms / ratio;
  const replay = replayMs >= 1000 ? `${seconds(replayMs)} s` : `${num(replayMs, replayMs < 10 ? 2 : 0)} ms`;
  return `${seconds(ms)} s of trace time (${replay} at --synthesis-speedup-ratio ${ratio.toLocaleString('en-US', { maximumFractionDigits: 6 })})`;
}

function longGap(a: ArrivalHistogram, o: TraceCheckOptions): Outcome {
  const L = TRACE_CHECK_LIMITS;
  if (a.count < L.minRowsForGap)
    return { check: 'long_gap', reason: `fewer than ${L.minRowsForGap} timestamped rows` };
  const gap = a.longestGap;
  if (gap === null || a.spanMs === 0 || gap.gapMs <= L.gapShare * a.spanMs) return null;
  return {
    check: 'long_gap',
    count: 1,
    message: `nothing is sent for ${traceSeconds(gap.gapMs, o.speedupRatio)} before line ${gap.endLine}, ${num((100 * gap.gapMs) / a.spanMs, 1)} % of the trace's span (more than ${L.gapShare * 100} %): the server idles and its caches may empty`,
    advice:
      'cut the trace around it (--fixed-schedule-start-offset / --fixed-schedule-end-offset), or read the run as two',
  };
}

function duplicateIds(skipped: SkipCounts): Outcome {
  const repeated = skipped.repeatedChatIds;
  if (repeated === undefined || repeated.count === 0) return null;
  const lines = repeated.rows.map((r) => r.line).join(', ');
  return {
    check: 'duplicate_ids',
    count: repeated.count,
    message: `${count(repeated.count, 'row')} ${agree(repeated.count, 'repeat', 'repeats')} an earlier row's chat_id (first at ${agree(repeated.rows.length, 'lines', 'line')} ${lines}): each root starts its own session, a child follows the latest row with its parent's id`,
    advice: 'check the file was not concatenated twice or cut from overlapping windows',
  };
}

function developerRole(c: RowCounts): Outcome {
  if (c.developerRows === 0) return null;
  return {
    check: 'developer_role',
    count: c.developerRows,
    message: `${count(c.developerRows, 'row')} ${agree(c.developerRows, 'send', 'sends')} a "developer" message, a role some servers refuse (vLLM: HTTP 400)`,
    advice: '--developer-role-as-system sends them as "system" messages',
  };
}

function unevenShards(c: RowCounts): Outcome {
  const n = c.shardRequests.length;
  if (n < 2) return null;
  const largest = Math.max(...c.shardRequests);
  const total = c.shardRequests.reduce((x, y) => x + y, 0);
  if (total === 0 || largest <= (TRACE_CHECK_LIMITS.shardFactor * total) / n) return null;
  const share = largest / total;
  return {
    check: 'uneven_shards',
    count: largest,
    message: `with --shard-count ${n} the largest shard sends ${num(largest)} of ${count(total, 'request')} (${num(share * 100, 1)} %, ${num(share * n, 2)}× an even 1/${n}; more than ${TRACE_CHECK_LIMITS.shardFactor}×): sessions never span shards, and a few long sessions weigh on one`,
    advice: 'use fewer shards, or size each shard’s client for the largest share',
  };
}

/**
 * The outcome of check `name`: a finding when it fires, a skip (with its reason) when it cannot
 * run, null when it ran and found nothing.
 */
export function checkFinding(
  name: TraceCheckName,
  c: RowCounts,
  a: ArrivalHistogram,
  skipped: SkipCounts,
  o: TraceCheckOptions,
): Outcome {
  switch (name) {
    case 'quantised_timestamps':
      return quantised(c, a);
    case 'zero_token_rows':
      return zeroTokens(c, skipped);
    case 'over_context':
      return overContext(c, o);
    case 'quiet_start':
      return a.count === 0 ? { check: name, reason: 'no row has a timestamp' } : quietStart(a);
    case 'long_gap':
      return longGap(a, o);
    case 'duplicate_ids':
      return duplicateIds(skipped);
    case 'developer_role':
      return developerRole(c);
    case 'uneven_shards':
      return unevenShards(c);
  }
}
