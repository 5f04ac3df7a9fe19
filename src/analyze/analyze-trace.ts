/**
 * `tokenload analyze-trace`: what a trace file asks of a server, before replaying it: rows, sessions
 * and turns per session, time span and mean arrival rate, ISL/OSL distributions, request type mix
 * and the ideal (infinite-cache) prefix hit ratio; for a Bailian trace, how many follow-ups have
 * siblings (rows naming the same parent: the branches a tree replay sends side by side).
 */

import { checkDeclaredFormat } from '../dataset/format-check.js';
import { idealPrefixHit, type PrefixHitStats } from '../dataset/prefix-analysis.js';
import { getDatasetLoader, isDatasetTypeName } from '../dataset/registry.js';
import { timeUnitWarning } from '../dataset/time-unit-check.js';
import { type Dataset, type SkipCounts, type TraceSynthesis, type Turn, treeIdOf } from '../dataset/types.js';
import { type Distribution, distributionOf } from './distribution.js';

/** Options of {@link analyzeTrace}. */
export interface AnalyzeOptions {
  /** `--custom-dataset-type` name (`bailian_trace`, `mooncake_trace`). */
  datasetType: string;
  /** Tokens per `hash_ids` block; default: the format's. */
  blockSize?: number;
  /** Trace synthesis to apply first (`--synthesis-*`; Bailian and Mooncake): the trace a replay with it sends. */
  synthesis?: Partial<TraceSynthesis>;
}

/** Result of {@link analyzeTrace}. Times are trace ms (no speedup). */
export interface TraceAnalysis {
  file: string;
  datasetType: string;
  blockSize: number;
  rows: number;
  sessions: number;
  /** Number of sessions by their turn count, ascending turn count: `{turns, sessions}`. */
  turnHistogram: { turns: number; sessions: number }[];
  /** First and last timestamp, ms; null when no row has a timestamp. */
  firstTimestampMs: number | null;
  lastTimestampMs: number | null;
  /** last − first, s (0 for a single timestamp). */
  spanS: number;
  /** Timestamped rows / span, requests per second; null when the span is 0. */
  meanArrivalRatePerS: number | null;
  /** Prompt tokens of synthetic rows. */
  isl: Distribution | undefined;
  /** Requested output tokens (`output_length`) of rows that have one. */
  osl: Distribution | undefined;
  /** Rows by request type (Bailian `type`; the input mode for rows without one), most frequent first. */
  typeMix: { type: string; rows: number }[];
  prefix: PrefixHitStats;
  skipped: SkipCounts;
  /**
   * The warning of timestamps implausible for the format's unit (dataset/time-unit-check.ts: a
   * Bailian trace spanning over a day or with a median gap over 60 s, a Mooncake trace of over
   * 1,000 rows within 1 s), judged on all rows; null when plausible.
   */
  timeUnitWarning: string | null;
  /**
   * Bailian: linked follow-ups whose parent has more than one linked child (parent links by the
   * replay's rule, dataset/bailian-links.ts); absent for other formats.
   */
  siblings?: SiblingCounts;
}

/** Sibling follow-ups of a Bailian trace ({@link TraceAnalysis.siblings}). */
export interface SiblingCounts {
  /** Rows whose parent has more than one linked child, each such child counted. */
  rowsWithSiblings: number;
  /** Rows with more than one linked child: each starts a branch per child after the first. */
  branchingParents: number;
}

/** Sibling counts of a dataset loaded as trees: each parent that branches has its branches plus one chain child. */
function siblingCounts(dataset: Dataset): SiblingCounts {
  const branchesOf = new Map<number, number>();
  for (const c of dataset.conversations)
    if (c.branch !== undefined)
      branchesOf.set(c.branch.parentLine, (branchesOf.get(c.branch.parentLine) ?? 0) + 1);
  let rowsWithSiblings = 0;
  for (const branches of branchesOf.values()) rowsWithSiblings += branches + 1;
  return { rowsWithSiblings, branchingParents: branchesOf.size };
}

function allTurns(dataset: Dataset): Turn[] {
  return dataset.conversations.flatMap((c) => c.turns);
}

/** Turns per session, a tree's sessions counted as one (the linear replay's session). */
function turnsPerSession(dataset: Dataset): Map<string, number> {
  const turns = new Map<string, number>();
  for (const c of dataset.conversations)
    turns.set(treeIdOf(c), (turns.get(treeIdOf(c)) ?? 0) + c.turns.length);
  return turns;
}

function turnHistogram(sessions: Map<string, number>): TraceAnalysis['turnHistogram'] {
  const counts = new Map<number, number>();
  for (const n of sessions.values()) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts.entries()].sort(([a], [b]) => a - b).map(([turns, sessions]) => ({ turns, sessions }));
}

function typeOf(turn: Turn): string {
  if (turn.requestType !== undefined && turn.requestType !== '') return turn.requestType;
  return turn.prompt.kind === 'synthetic' ? '(untyped)' : `(${turn.prompt.kind})`;
}

function typeMix(turns: readonly Turn[]): TraceAnalysis['typeMix'] {
  const counts = new Map<string, number>();
  for (const t of turns) counts.set(typeOf(t), (counts.get(typeOf(t)) ?? 0) + 1);
  return [...counts.entries()]
    .sort(([a, x], [b, y]) => y - x || a.localeCompare(b))
    .map(([type, rows]) => ({ type, rows }));
}

function timing(
  turns: readonly Turn[],
): Pick<TraceAnalysis, 'firstTimestampMs' | 'lastTimestampMs' | 'spanS' | 'meanArrivalRatePerS'> {
  const stamps = turns.flatMap((t) => (t.timestampMs === undefined ? [] : [t.timestampMs]));
  if (stamps.length === 0)
    return { firstTimestampMs: null, lastTimestampMs: null, spanS: 0, meanArrivalRatePerS: null };
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const ts of stamps) {
    first = Math.min(first, ts);
    last = Math.max(last, ts);
  }
  const spanS = (last - first) / 1000;
  return {
    firstTimestampMs: first,
    lastTimestampMs: last,
    spanS,
    meanArrivalRatePerS: spanS > 0 ? stamps.length / spanS : null,
  };
}

/**
 * The {@link TraceAnalysis} of an already loaded dataset (loaded without speedup); a tree-loaded
 * Bailian dataset's sessions are its trees.
 */
export function analyzeDataset(dataset: Dataset, datasetType: string): TraceAnalysis {
  const turns = allTurns(dataset);
  const sessions = turnsPerSession(dataset);
  const isl = turns.flatMap((t) => (t.prompt.kind === 'synthetic' ? [t.prompt.inputLength] : []));
  const osl = turns.flatMap((t) => (t.maxTokens === undefined ? [] : [t.maxTokens]));
  return {
    file: dataset.file,
    datasetType,
    blockSize: dataset.blockSize,
    rows: dataset.turnCount,
    sessions: sessions.size,
    turnHistogram: turnHistogram(sessions),
    ...timing(turns),
    isl: distributionOf(isl),
    osl: distributionOf(osl),
    typeMix: typeMix(turns),
    prefix: idealPrefixHit(dataset),
    skipped: dataset.skipped,
    ...(datasetType === 'bailian_trace' ? { siblings: siblingCounts(dataset) } : {}),
    timeUnitWarning: timeUnitWarning(
      dataset.file,
      datasetType,
      turns.flatMap((t) => (t.timestampMs === undefined ? [] : [t.timestampMs])),
      'all rows',
    ),
  };
}

/**
 * Loads `file` with the loader of `options.datasetType` and analyses it.
 * @throws {DatasetError} for a malformed trace; {ConfigError} for a trace of another format
 *   than `options.datasetType` (dataset/format-check.ts); {@link Error} for an unknown dataset type.
 */
export async function analyzeTrace(file: string, options: AnalyzeOptions): Promise<TraceAnalysis> {
  const loader = getDatasetLoader(options.datasetType);
  if (isDatasetTypeName(loader.name)) checkDeclaredFormat(file, loader.name);
  const dataset = await loader.load(file, {
    ...(options.blockSize === undefined ? {} : { blockSize: options.blockSize }),
    ...(options.synthesis === undefined ? {} : { synthesis: options.synthesis }),
    sessionTrees: true,
  });
  return analyzeDataset(dataset, loader.name);
}
