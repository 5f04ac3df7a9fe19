/**
 * Exact distribution statistics, as AIPerf computes them with numpy: percentiles with the "linear"
 * method and the population standard deviation (AIPerf metric reference, "Statistics"; numpy
 * `percentile(method="linear")`, `std(ddof=0)`). Values are sorted once, so memory is one copy.
 */

/** Percentiles reported for every distribution, in this order. */
export const PERCENTILES = [1, 5, 10, 25, 50, 75, 90, 95, 99] as const;

/** Keys of a statistics object, in AIPerf's CSV column order. */
export const STAT_KEYS = [
  'avg',
  'min',
  'max',
  'p1',
  'p5',
  'p10',
  'p25',
  'p50',
  'p75',
  'p90',
  'p95',
  'p99',
  'std',
] as const;

/** One statistic name. */
export type StatKey = (typeof STAT_KEYS)[number];

/** Statistics of a non-empty distribution, in the values' own unit; `count` is the number of values. */
export type Stats = Record<StatKey, number> & { count: number };

/**
 * numpy-linear percentile of ascending `sorted` values: idx = q/100 · (n − 1), interpolated between
 * floor(idx) and ceil(idx). `q` in [0, 100]; `sorted` must be non-empty.
 */
export function percentileSorted(sorted: Float64Array, q: number): number {
  const idx = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(idx);
  const hi = Math.min(lo + 1, sorted.length - 1);
  const low = sorted[lo]!;
  return low + (sorted[hi]! - low) * (idx - lo);
}

/** p50, p90, p99 and max of a distribution, rounded to 3 decimals (µs for ms values). */
export interface TailStats {
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/**
 * {@link TailStats} of non-empty `values` ({@link percentileSorted}); the compact view the health
 * verdict and the start-up section print.
 */
export function tailStats(values: readonly number[]): TailStats {
  const sorted = Float64Array.from(values).sort();
  const round = (x: number): number => (Number.isFinite(x) ? Math.round(x * 1000) / 1000 : 0);
  return {
    p50: round(percentileSorted(sorted, 50)),
    p90: round(percentileSorted(sorted, 90)),
    p99: round(percentileSorted(sorted, 99)),
    max: round(sorted[sorted.length - 1] as number),
  };
}

/**
 * Mean and population standard deviation of `values`, summed in their order (ascending, as every
 * caller passes them: a merge's spilled runs are summed in the same order, see value-store.ts).
 */
export function meanAndStd(values: Float64Array): { avg: number; std: number } {
  let sum = 0;
  for (const v of values) sum += v;
  const avg = sum / values.length;
  let squares = 0;
  for (const v of values) squares += (v - avg) ** 2;
  return { avg, std: Math.sqrt(squares / values.length) };
}

/**
 * A non-empty distribution seen ascending: how many values, the i-th smallest (0-based, i < count)
 * and the mean and population std of {@link meanAndStd} over the ascending values.
 */
export interface AscendingView {
  count: number;
  at(i: number): number;
  avg: number;
  std: number;
}

/** The {@link AscendingView} of non-empty values already sorted ascending. */
export function viewOfSorted(sorted: Float64Array): AscendingView {
  return { count: sorted.length, at: (i) => sorted[i] as number, ...meanAndStd(sorted) };
}

/** numpy-linear percentile (as {@link percentileSorted}) of an {@link AscendingView}. */
export function percentileOfView(view: AscendingView, q: number): number {
  const idx = (q / 100) * (view.count - 1);
  const lo = Math.floor(idx);
  const hi = Math.min(lo + 1, view.count - 1);
  const low = view.at(lo);
  return low + (view.at(hi) - low) * (idx - lo);
}

/**
 * avg, min, max, p1…p99, population std and count of `values`; undefined for an empty array (empty
 * distributions are omitted, never reported as 0). Does not modify `values`.
 */
export function computeStats(values: Float64Array): Stats | undefined {
  if (values.length === 0) return undefined;
  return statsOfSorted(Float64Array.from(values).sort());
}

/** {@link computeStats} of values already sorted ascending (`Float64Array.prototype.sort`); non-empty. */
export function statsOfSorted(sorted: Float64Array): Stats {
  return statsOfView(viewOfSorted(sorted));
}

/** {@link computeStats} of a distribution seen through an {@link AscendingView}. */
export function statsOfView(view: AscendingView): Stats {
  const pct = (q: number): number => percentileOfView(view, q);
  return {
    avg: view.avg,
    min: view.at(0),
    max: view.at(view.count - 1),
    p1: pct(1),
    p5: pct(5),
    p10: pct(10),
    p25: pct(25),
    p50: pct(50),
    p75: pct(75),
    p90: pct(90),
    p95: pct(95),
    p99: pct(99),
    std: view.std,
    count: view.count,
  };
}
