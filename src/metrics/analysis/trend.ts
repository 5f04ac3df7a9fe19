/**
 * Trend and change tests for a run's time series (in-flight requests, TTFT per time bin):
 *
 * - Mann–Kendall test (Mann 1945, Econometrica 13; Kendall, "Rank Correlation Methods", 1975): is
 *   the series monotonically rising or falling, whatever the shape? It sees a backlog growing like √t
 *   (a server exactly at capacity) as surely as a linear one. z uses the variance without tie
 *   correction and a continuity correction of 1.
 * - Sen's slope (Sen 1968, JASA 63): the median of the pairwise slopes, robust to outliers.
 * - One-sided tabular CUSUM (Page 1954, Biometrika 41): where a sustained rise above a baseline
 *   began, taken as the last time the cumulative sum was 0 before it crossed the alarm level.
 */
import { percentileSorted } from '../stats.js';

/** Mann–Kendall statistic S and its normal score z (positive: rising). */
export interface TrendTest {
  s: number;
  z: number;
}

/** Mann–Kendall test of `values` in time order; z is 0 for fewer than 3 values. */
export function mannKendall(values: readonly number[]): TrendTest {
  const n = values.length;
  if (n < 3) return { s: 0, z: 0 };
  let s = 0;
  for (let i = 0; i < n - 1; i++) {
    const vi = values[i] as number;
    for (let j = i + 1; j < n; j++) s += Math.sign((values[j] as number) - vi);
  }
  const variance = (n * (n - 1) * (2 * n + 5)) / 18;
  const z = s === 0 ? 0 : (s - Math.sign(s)) / Math.sqrt(variance);
  return { s, z };
}

/** Sen's slope of `values` sampled every `stepS` seconds, per second; 0 for fewer than 2 values. */
export function senSlope(values: readonly number[], stepS: number): number {
  const slopes: number[] = [];
  for (let i = 0; i < values.length - 1; i++)
    for (let j = i + 1; j < values.length; j++)
      slopes.push(((values[j] as number) - (values[i] as number)) / ((j - i) * stepS));
  if (slopes.length === 0) return 0;
  slopes.sort((a, b) => a - b);
  const mid = slopes.length >> 1;
  return slopes.length % 2 === 1
    ? (slopes[mid] as number)
    : ((slopes[mid - 1] as number) + (slopes[mid] as number)) / 2;
}

/**
 * Index where a sustained rise of `values` above `baseline` began: the one-sided CUSUM
 * S_i = max(0, S_{i−1} + x_i − baseline − k) alarms when S_i > h; the change is placed just after the
 * last i with S_i = 0 before the first alarm. Null when it never alarms.
 */
export function cusumOnset(values: readonly number[], baseline: number, k: number, h: number): number | null {
  let s = 0;
  let lastZero = -1;
  for (let i = 0; i < values.length; i++) {
    s = Math.max(0, s + (values[i] as number) - baseline - k);
    if (s === 0) lastZero = i;
    else if (s > h) return lastZero + 1;
  }
  return null;
}

/** Median of `values`; NaN when empty (the run's own percentile: numpy-linear at 50). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  return percentileSorted(Float64Array.from(values).sort(), 50);
}

/** Robust spread: 1.4826 × the median absolute deviation (a normal σ's estimate); NaN when empty. */
export function robustSigma(values: readonly number[]): number {
  const m = median(values);
  return 1.4826 * median(values.map((v) => Math.abs(v - m)));
}
