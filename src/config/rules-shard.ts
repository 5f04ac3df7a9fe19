/** The cross-field rule of the shard options (`--shard-index`, `--shard-count`). */
import type { RuleInput } from './rule-types.js';

/**
 * The first problem of the shard options: index and count go together, the index is below the
 * count, and every shard gets at least one session slot and one request when those are split.
 * @param fixed the run replays on a fixed schedule (config-rules.ts `resolvesToFixedSchedule`).
 */
export function shardProblem(c: RuleInput, fixed: boolean): string | null {
  const { shardIndex: index, shardCount: count } = c;
  if ((index === undefined) !== (count === undefined))
    return '--shard-index and --shard-count go together: give both or neither.';
  if (index === undefined || count === undefined) return null;
  if (index >= count)
    return `--shard-index ${index} is not below --shard-count ${count} (indices run from 0 to ${count - 1}).`;
  const split = splitProblem(c, count, fixed);
  return split === null ? null : `--shard-count ${count}: ${split}`;
}

/** A split of the concurrency or request count that would leave a shard with nothing. */
function splitProblem(c: RuleInput, count: number, fixed: boolean): string | null {
  const closedLoop = !fixed && c.requestRate === undefined;
  const concurrency = c.concurrency ?? (closedLoop ? 1 : undefined);
  const last = `shard ${count - 1}`;
  if (concurrency !== undefined && concurrency < count)
    return `--concurrency ${concurrency}${c.concurrency === undefined ? ' (the default)' : ''} is split over the shards and would leave ${last} without a session slot; give --concurrency ${count} or more.`;
  const requests = c.requestCount ?? syntheticDefaultCount(c);
  if (requests !== undefined && requests < count)
    return `--request-count ${requests}${c.requestCount === undefined ? ' (the default)' : ''} is split over the shards and would leave ${last} without a request; give --request-count ${count} or more.`;
  return null;
}

/**
 * Dataset types AIPerf sends by request count rather than once through: its default count
 * (max(10, 2 × concurrency)) also stops a `single_turn` or `multi_turn` file, cycling through its
 * entries (AIPerf's custom-dataset tutorial: 5 prompts at concurrency 2 send 10 requests).
 */
const COUNTED_FILE_TYPES: ReadonlySet<string> = new Set(['single_turn', 'multi_turn']);

/**
 * The request count a run stops at without --request-count, --benchmark-duration,
 * --conversation-num or --request-rate-series (AIPerf's max(10, 2 × concurrency)): a synthetic run, or a `single_turn` /
 * `multi_turn` file not replayed on a fixed schedule; undefined for anything else (a trace is
 * replayed once).
 */
export function syntheticDefaultCount(c: {
  inputFile?: string | undefined;
  customDatasetType?: string | undefined;
  fixedSchedule?: boolean | undefined;
  requestCount?: number | undefined;
  benchmarkDurationSeconds?: number | undefined;
  conversationNum?: number | undefined;
  concurrency?: number | undefined;
  requestRateSeries?: unknown;
}): number | undefined {
  if (c.requestCount !== undefined || c.benchmarkDurationSeconds !== undefined) return undefined;
  // A rate series without a count or duration ends at its last point.
  if (c.requestRateSeries !== undefined) return undefined;
  if (c.conversationNum !== undefined) return undefined;
  if (c.inputFile !== undefined) {
    const counted = c.customDatasetType !== undefined && COUNTED_FILE_TYPES.has(c.customDatasetType);
    if (!counted || c.fixedSchedule === true) return undefined;
  }
  return Math.max(10, 2 * (c.concurrency ?? 1));
}
