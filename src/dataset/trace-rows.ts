/**
 * The part of loading every trace format shares: stream the JSONL file, validate each row with the
 * format's parser, drop rows outside the offset window (and, when asked, over the synthesis max ISL),
 * count what was dropped, and apply the speedup ratio to the surviving rows. Grouping into sessions
 * is the caller's job and runs on the rows this returns, so filtering always happens before
 * grouping (AIPerf `BaseTraceDatasetLoader`).
 */
import { type JsonlReadOptions, type JsonlRow, readJsonl } from './jsonl-reader.js';
import type { ResolvedLoadOptions } from './load-options.js';
import { overMaxIsl, speedupMs } from './trace-synthesis.js';
import { DatasetError, type SkipCounts, type SourceRef, type Turn } from './types.js';

/**
 * A validated row. A parser returns `turn.timestampMs` in trace ms before speedup;
 * {@link streamTraceRows} divides it by the speedup ratio before yielding the row.
 */
export interface TraceRow {
  turn: Turn;
  /** The row's JSON value as read, with {@link StreamRowsOptions.keepValues}. */
  value?: unknown;
}

/**
 * A format's row parser: validates one JSON value and builds its row (turn index left at 0).
 * @throws {DatasetError} naming file, line and field for a malformed row.
 */
export type RowParser<R extends TraceRow> = (value: unknown, at: SourceRef, blockSize: number) => R;

/**
 * Reads a file as numbered rows; {@link readJsonl} by default. CSV formats pass a CSV reader whose
 * `value` is the row's cells. `onBadJson` receives the error for an unreadable line when skipping.
 */
export type RowReader = (file: string, options: JsonlReadOptions) => AsyncIterable<JsonlRow>;

/** Rows that survived validation and the offset window, in file order, plus the drop counts. */
export interface CollectedRows<R extends TraceRow> {
  rows: R[];
  skipped: SkipCounts;
}

function formatWindow(options: ResolvedLoadOptions): string {
  const start = options.startOffsetMs === undefined ? 'none' : `${options.startOffsetMs} ms`;
  const end = options.endOffsetMs === undefined ? 'none' : `${options.endOffsetMs} ms`;
  return `start offset ${start}, end offset ${end}`;
}

function nothingLeftError(file: string, options: ResolvedLoadOptions, skipped: SkipCounts): DatasetError {
  const overIsl = skipped.overMaxIsl ?? 0;
  if (overIsl > 0) {
    const window = skipped.beforeStartOffset + skipped.afterEndOffset;
    const also = window > 0 ? ` (and ${window} outside the offset window)` : '';
    return new DatasetError(
      `${file}: no rows left: ${overIsl} rows have an input_length over the synthesis max ISL (${options.synthesis?.maxIsl})${also}`,
      file,
    );
  }
  const filtered = skipped.beforeStartOffset + skipped.afterEndOffset;
  if (filtered > 0) {
    return new DatasetError(
      `${file}: no rows inside the offset window (${formatWindow(options)}; inclusive, trace ms before ` +
        `speedup): ${skipped.beforeStartOffset} rows before the start, ${skipped.afterEndOffset} after the end`,
      file,
    );
  }
  const bad = skipped.badLines > 0 ? ` (${skipped.badLines} malformed lines skipped)` : '';
  return new DatasetError(`${file}: the trace has no usable rows${bad}`, file);
}

/** Returns which offset bound drops `tsMs`, or undefined when it is inside the window (or has no timestamp). */
function outsideWindow(
  tsMs: number | undefined,
  options: ResolvedLoadOptions,
): 'beforeStartOffset' | 'afterEndOffset' | undefined {
  if (tsMs === undefined) return undefined;
  if (options.startOffsetMs !== undefined && tsMs < options.startOffsetMs) return 'beforeStartOffset';
  if (options.endOffsetMs !== undefined && tsMs > options.endOffsetMs) return 'afterEndOffset';
  return undefined;
}

/** Options of {@link streamTraceRows}. */
export interface StreamRowsOptions<R extends TraceRow = TraceRow> {
  /**
   * Stop reading at the first row after the end offset, provided every row read so far was in
   * non-decreasing timestamp order (so no later row can fall inside the window). The line it stopped
   * at is recorded in `skipped.unreadAfterLine`. For a streaming replay of a huge trace.
   */
  stopAtEndOffset?: boolean;
  /** Called with each well-formed row dropped by the offset window (to name it when a row refers to it). */
  onOutsideWindow?: (row: R) => void;
  /**
   * Drop rows over `options.synthesis.maxIsl` (counted in `skipped.overMaxIsl`), after the offset
   * window; for the formats that take trace synthesis (Bailian, Mooncake).
   */
  maxIsl?: boolean;
  /** Called with each row dropped by the max ISL. */
  onOverMaxIsl?: (row: R) => void;
  /** Keep each row's JSON value in `row.value` (a trace rewrite). */
  keepValues?: boolean;
}

/**
 * Streams a trace file as validated rows: each row is parsed, dropped (and counted in `skipped`) when
 * outside the offset window or (with `maxIsl`) over the synthesis max ISL, and has its
 * `turn.timestampMs` divided by `options.speedupRatio` ({@link speedupMs}) before it is yielded. Rows without a timestamp are never dropped by the offsets. Counts in `skipped` are
 * live and final once the generator returns.
 * @param skipped counters this updates (see {@link emptySkipCounts}).
 * @throws {DatasetError} for a malformed row or non-JSON line (unless `skipBadLines`, which counts them
 *   in `skipped.badLines`), for a Git LFS pointer file, or when no row is left (naming the offsets
 *   or the max ISL).
 */
export async function* streamTraceRows<R extends TraceRow>(
  file: string,
  options: ResolvedLoadOptions,
  parse: RowParser<R>,
  skipped: SkipCounts,
  read: RowReader = readJsonl,
  streamOptions: StreamRowsOptions<R> = {},
): AsyncGenerator<R> {
  const onBadJson = options.skipBadLines
    ? (): void => {
        skipped.badLines += 1;
      }
    : undefined;
  let yielded = 0;
  let maxTsMs = Number.NEGATIVE_INFINITY;
  let sorted = true;
  for await (const { line, value } of read(file, { onBadJson })) {
    let row: R;
    try {
      row = parse(value, { file, line }, options.blockSize);
    } catch (err) {
      if (!(options.skipBadLines && err instanceof DatasetError)) throw err;
      skipped.badLines += 1;
      continue;
    }
    if (streamOptions.keepValues === true) row.value = value;
    const tsMs = row.turn.timestampMs;
    if (tsMs !== undefined) {
      if (tsMs < maxTsMs) sorted = false;
      else maxTsMs = tsMs;
    }
    const dropReason = outsideWindow(tsMs, options);
    if (dropReason !== undefined) {
      skipped[dropReason] += 1;
      streamOptions.onOutsideWindow?.(row);
      if (dropReason === 'afterEndOffset' && sorted && streamOptions.stopAtEndOffset === true) {
        skipped.unreadAfterLine = line;
        break;
      }
      continue;
    }
    if (streamOptions.maxIsl === true && overMaxIsl(row.turn, options.synthesis)) {
      skipped.overMaxIsl = (skipped.overMaxIsl ?? 0) + 1;
      streamOptions.onOverMaxIsl?.(row);
      continue;
    }
    if (tsMs !== undefined) row.turn.timestampMs = speedupMs(tsMs, options.speedupRatio);
    yielded += 1;
    yield row;
  }
  if (yielded === 0) throw nothingLeftError(file, options, skipped);
}

/** Zeroed drop counters. */
export function emptySkipCounts(): SkipCounts {
  return { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 };
}

/**
 * Reads, validates and filters a whole trace file ({@link streamTraceRows} collected into an array).
 * @param read the row source (default {@link readJsonl}).
 * @throws {DatasetError} as {@link streamTraceRows}.
 */
export async function collectTraceRows<R extends TraceRow>(
  file: string,
  options: ResolvedLoadOptions,
  parse: RowParser<R>,
  read: RowReader = readJsonl,
  streamOptions: StreamRowsOptions<R> = {},
): Promise<CollectedRows<R>> {
  const skipped = emptySkipCounts();
  const rows: R[] = [];
  for await (const row of streamTraceRows(file, options, parse, skipped, read, streamOptions)) rows.push(row);
  return { rows, skipped };
}
