/**
 * Whether a trace's timestamps are plausible for its format's unit. A Bailian trace's `timestamp`
 * is seconds and a Mooncake trace's milliseconds; a file written in the other unit loads without an
 * error and replays 1,000× too slow (a Bailian export in ms: hours at "0.0 req/s") or too fast.
 *
 * Rules, on the timestamped rows judged (`rows`; `span` = last − first after sorting; `median gap`
 * = the median of the differences between consecutive sorted timestamps):
 * - `bailian_trace` (seconds): warn when the span exceeds {@link BAILIAN_MAX_SPAN_S} s (a day) or
 *   the median gap exceeds {@link BAILIAN_MAX_MEDIAN_GAP_S} s; the message says so when the values
 *   also look like epoch milliseconds (≥ {@link EPOCH_MS_FLOOR}).
 * - `mooncake_trace` (ms): warn when more than {@link MOONCAKE_MIN_ROWS} rows span less than
 *   {@link MOONCAKE_MIN_SPAN_MS} ms (over a thousand requests a second: seconds written as ms).
 *
 * A run judges the schedule it will replay: the timestamps divided by `--synthesis-speedup-ratio`
 * (so a Bailian trace in ms replayed with `--synthesis-speedup-ratio 1000` is plausible, and the
 * advice names the ratio that would fix the replay, never the one already given); analyze-trace
 * judges the file itself (ratio 1).
 *
 * Other formats carry datetimes (Azure) or are not checked. It is a warning, not an error: a trace
 * may truly be that slow or that dense.
 */
import { headLines } from './detect.js';

/** A Bailian trace whose timestamps span more than this many seconds (a day) is suspect. */
export const BAILIAN_MAX_SPAN_S = 86_400;
/** A Bailian trace whose median gap between rows is over this many seconds is suspect. */
export const BAILIAN_MAX_MEDIAN_GAP_S = 60;
/** A Mooncake trace of more than {@link MOONCAKE_MIN_ROWS} rows spanning less than this many ms is suspect. */
export const MOONCAKE_MIN_SPAN_MS = 1000;
/** Rows a Mooncake trace needs before its span is judged. */
export const MOONCAKE_MIN_ROWS = 1000;
/** Values at or above this look like epoch milliseconds (2001-09-09 in ms; year 33658 in seconds). */
export const EPOCH_MS_FLOOR = 1e12;

/** What the rule reads of the timestamps, in the trace's own unit. */
interface Spread {
  rows: number;
  span: number;
  medianGap: number;
  max: number;
}

function spreadOf(values: readonly number[]): Spread | null {
  if (values.length < 2) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const gaps = sorted.slice(1).map((v, i) => v - (sorted[i] as number));
  gaps.sort((a, b) => a - b);
  const mid = gaps.length >> 1;
  const medianGap =
    gaps.length % 2 === 1 ? (gaps[mid] as number) : ((gaps[mid - 1] as number) + (gaps[mid] as number)) / 2;
  const max = sorted[sorted.length - 1] as number;
  return { rows: sorted.length, span: max - (sorted[0] as number), medianGap, max };
}

const fmt = (n: number): string => (Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, ''));

/** ` once replayed at --synthesis-speedup-ratio R`, or '' at ratio 1. */
const replayedAt = (ratio: number): string =>
  ratio === 1 ? '' : ` once replayed at --synthesis-speedup-ratio ${fmt(ratio)}`;

function bailianWarning(file: string, s: Spread, scope: string, ratio: number): string | null {
  if (s.span <= BAILIAN_MAX_SPAN_S && s.medianGap <= BAILIAN_MAX_MEDIAN_GAP_S) return null;
  const epoch = s.max * ratio >= EPOCH_MS_FLOOR ? '; the values look like epoch milliseconds' : '';
  return (
    `${file}: bailian_trace timestamps are seconds, but ${s.rows} timestamped rows (${scope}) span ${fmt(s.span)} s${replayedAt(ratio)} ` +
    `(${fmt(s.span / 3600)} h) with a median gap of ${fmt(s.medianGap)} s between rows (plausible: a span up to ` +
    `${BAILIAN_MAX_SPAN_S} s and a median gap up to ${BAILIAN_MAX_MEDIAN_GAP_S} s)${epoch}. If they are milliseconds, ` +
    `the replay waits 1,000× too long: divide them by 1000, or give --synthesis-speedup-ratio ${fmt(ratio * 1000)}.`
  );
}

function mooncakeWarning(file: string, s: Spread, scope: string, ratio: number): string | null {
  if (s.rows <= MOONCAKE_MIN_ROWS || s.span >= MOONCAKE_MIN_SPAN_MS) return null;
  return (
    `${file}: mooncake_trace timestamps are milliseconds, but ${s.rows} timestamped rows (${scope}) span ` +
    `${fmt(s.span)} ms${replayedAt(ratio)} with a median gap of ${fmt(s.medianGap)} ms between rows (plausible: over ` +
    `${MOONCAKE_MIN_ROWS} rows span at least ${MOONCAKE_MIN_SPAN_MS} ms). If they are seconds, the replay runs ` +
    `1,000× too fast: multiply them by 1000, or give --synthesis-speedup-ratio ${fmt(ratio / 1000)}.`
  );
}

/**
 * The unit warning of the module comment for a trace of `datasetType` whose timestamped rows have
 * `timestampsMs` (ms, as the loader converts them: a Bailian second is 1000); `scope` says which
 * rows were judged (e.g. `all rows`); `speedupRatio` (`--synthesis-speedup-ratio`, default 1)
 * divides them into the schedule judged. Null when plausible, for fewer than 2 timestamps, or for
 * a format not checked.
 */
export function timeUnitWarning(
  file: string,
  datasetType: string,
  timestampsMs: readonly number[],
  scope: string,
  speedupRatio = 1,
): string | null {
  if (datasetType === 'bailian_trace') {
    const s = spreadOf(timestampsMs.map((ms) => ms / 1000 / speedupRatio));
    return s === null ? null : bailianWarning(file, s, scope, speedupRatio);
  }
  if (datasetType === 'mooncake_trace') {
    const s = spreadOf(timestampsMs.map((ms) => ms / speedupRatio));
    return s === null ? null : mooncakeWarning(file, s, scope, speedupRatio);
  }
  return null;
}

/**
 * The unit warning judged on the rows in the first MiB of a Bailian or Mooncake JSONL `file` (cheap
 * at a run's start, whatever the file's size; the whole file when smaller). Lines that are not JSON
 * objects with a numeric `timestamp` are skipped (the loader reports bad ones); `speedupRatio` as
 * {@link timeUnitWarning}. Null as {@link timeUnitWarning}, and for other formats.
 */
export function headTimeUnitWarning(file: string, datasetType: string, speedupRatio = 1): string | null {
  if (datasetType !== 'bailian_trace' && datasetType !== 'mooncake_trace') return null;
  const unitMs = datasetType === 'bailian_trace' ? 1000 : 1;
  const values: number[] = [];
  let lines: string[];
  try {
    lines = headLines(file);
  } catch {
    return null;
  }
  for (const line of lines) {
    if (!line.includes('"timestamp"')) continue;
    try {
      const t: unknown = (JSON.parse(line) as { timestamp?: unknown }).timestamp;
      if (typeof t === 'number' && Number.isFinite(t)) values.push(t * unitMs);
    } catch {
      // A malformed line is the loader's to report.
    }
  }
  return timeUnitWarning(file, datasetType, values, 'in the first MiB of the file', speedupRatio);
}
