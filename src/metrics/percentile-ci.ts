/**
 * Distribution-free 95 % confidence intervals for percentiles, from order statistics (Hahn & Meeker,
 * "Statistical Intervals", 2nd ed., Wiley 2017, §5.2; Conover, "Practical Nonparametric Statistics",
 * 3rd ed., Wiley 1999, §3.2).
 *
 * Of n independent values, the number B below the population's q-quantile is Binomial(n, q), so the
 * closed interval [x_(l), x_(u)] between the l-th and u-th smallest values misses it below with
 * probability P(B ≤ l − 1) and above with probability P(B ≥ u). The ranks are chosen equal-tailed:
 * l the largest rank with P(B ≤ l − 1) ≤ 2.5 %, u the smallest with P(B ≥ u) ≤ 2.5 %, so the
 * coverage is at least 95 % for any distribution (ties only widen it). A bound whose rank would fall
 * outside 1…n does not exist and is null: the upper bound of the q-quantile needs q^n ≤ 2.5 %, i.e.
 * n ≥ ln 0.025 / ln q ({@link minCountForUpperBound}: 368 values for p99, 3,688 for p99.9).
 *
 * The binomial is computed exactly for every n, with no normal approximation: its probabilities are
 * summed over the mean ± (10 standard deviations + 10), outside which less than 1e-18 of its mass
 * lies, so a run's 375 million chunk gaps cost about 200,000 terms (about 10 ms) for a median.
 */
import { type AscendingView, PERCENTILES, percentileOfView } from './stats.js';

/** Coverage of every interval this module gives. */
const CI_LEVEL = 0.95;

/** The chance each side may miss: half of 1 − {@link CI_LEVEL}. */
const TAIL = (1 - CI_LEVEL) / 2;

/** A percentile's 95 % interval, in the values' unit; a bound that does not exist is null. */
export interface PercentileInterval {
  low: number | null;
  high: number | null;
}

/** The 1-based ranks of an interval's bounds among n sorted values; null where none exists. */
export interface IntervalRanks {
  low: number | null;
  high: number | null;
}

/**
 * Unnormalized Binomial(n, q) probabilities over [from, from + weights.length), from the recurrence
 * P(k + 1) / P(k) = (n − k)/(k + 1) · q/(1 − q) started at the mode (no factorials, no overflow).
 */
function binomialWindow(n: number, q: number): { from: number; weights: Float64Array; total: number } {
  const mean = n * q;
  const spread = 10 * Math.sqrt(mean * (1 - q)) + 10;
  const from = Math.max(0, Math.floor(mean - spread));
  const to = Math.min(n, Math.ceil(mean + spread));
  const mode = Math.min(to, Math.max(from, Math.floor((n + 1) * q)));
  const weights = new Float64Array(to - from + 1);
  const odds = q / (1 - q);
  weights[mode - from] = 1;
  for (let k = mode; k < to; k++)
    weights[k + 1 - from] = (weights[k - from] as number) * ((n - k) / (k + 1)) * odds;
  for (let k = mode; k > from; k--)
    weights[k - 1 - from] = ((weights[k - from] as number) * k) / ((n - k + 1) * odds);
  let total = 0;
  for (const w of weights) total += w;
  return { from, weights, total };
}

/**
 * The ranks (1-based) of the equal-tailed 95 % interval of the q-quantile of n values: low = 1 + the
 * largest k ≤ n − 1 with P(B ≤ k) ≤ 2.5 %, high = 1 + the smallest k ≤ n − 1 with P(B ≤ k) ≥ 97.5 %,
 * B ~ Binomial(n, q). E.g. n = 20, q = 0.5: ranks 6 and 15 (P(B ≤ 5) = 0.0207, P(B ≤ 14) = 0.9793;
 * coverage 0.9586, as binomial tables give).
 * @throws {RangeError} when n is not a positive integer or q is not inside (0, 1).
 */
export function intervalRanks(n: number, q: number): IntervalRanks {
  if (!(Number.isInteger(n) && n > 0))
    throw new RangeError(`a percentile interval needs n ≥ 1 values, got ${n}`);
  if (!(q > 0 && q < 1)) throw new RangeError(`a percentile interval needs 0 < q < 1, got ${q}`);
  const { from, weights, total } = binomialWindow(n, q);
  let low: number | null = null;
  let high: number | null = null;
  // Below the window the CDF is 0 (to 1e-18): a rank there misses less than 2.5 % below.
  if (from > 0) low = from;
  let cdf = 0;
  for (let k = from; k <= n - 1 && k - from < weights.length; k++) {
    cdf += (weights[k - from] as number) / total;
    if (cdf <= TAIL) low = k + 1;
    if (cdf >= 1 - TAIL) {
      high = k + 1;
      break;
    }
  }
  return { low, high };
}

/**
 * The fewest values for which the 95 % upper bound of the q-quantile exists: the smallest n with
 * q^n ≤ 2.5 % (368 for q = 0.99, 3,688 for q = 0.999).
 */
function minCountForUpperBound(q: number): number {
  return Math.ceil(Math.log(TAIL) / Math.log(q));
}

/**
 * The 95 % interval of the q-quantile (0 < q < 1) of non-empty ascending `sorted` values
 * ({@link intervalRanks}), assuming the values are independent draws from one distribution.
 */
export function percentileInterval(sorted: Float64Array, q: number): PercentileInterval {
  return percentileIntervalOfView(ranksOf(sorted), q);
}

/** `sorted` as a view that reads ranks only (its mean and std are not computed: NaN). */
function ranksOf(sorted: Float64Array): AscendingView {
  return { count: sorted.length, at: (i) => sorted[i] as number, avg: Number.NaN, std: Number.NaN };
}

function percentileIntervalOfView(view: AscendingView, q: number): PercentileInterval {
  const ranks = intervalRanks(view.count, q);
  return {
    low: ranks.low === null ? null : view.at(ranks.low - 1),
    high: ranks.high === null ? null : view.at(ranks.high - 1),
  };
}

/** Key of a reported percentile in a summary: `p1` … `p99`, and `p999` for p99.9. */
export type PercentileKey = `p${(typeof PERCENTILES)[number]}` | 'p999';

/** The 95 % interval of each percentile of a distribution, keyed as the percentiles are. */
export type PercentileIntervals = Partial<Record<PercentileKey, PercentileInterval>>;

/** p99.9 (when the sample supports it) and the 95 % interval of every percentile reported. */
export interface PercentileConfidence {
  /**
   * numpy-linear p99.9, present only when its 95 % upper bound exists (n ≥ 3,688,
   * {@link minCountForUpperBound}): with fewer values no interval bounds it from above.
   */
  p999?: number;
  /** The interval of p1 … p99 (and p999 when present); `count` beside it is the n they rest on. */
  ci95: PercentileIntervals;
}

/** Fewest values for a p99.9 (its 95 % upper bound exists): 3,688. */
export const P999_MIN_COUNT = minCountForUpperBound(0.999);

/**
 * {@link PercentileConfidence} of non-empty ascending `sorted` values: the summary's p99.9 and
 * `ci95` of each per-record metric, beside the AIPerf statistics of `statsOfSorted` (./stats.ts).
 */
export function percentileConfidence(sorted: Float64Array): PercentileConfidence {
  return percentileConfidenceOfView(ranksOf(sorted));
}

/** {@link percentileConfidence} of a distribution seen through an {@link AscendingView}. */
export function percentileConfidenceOfView(view: AscendingView): PercentileConfidence {
  const ci95: PercentileIntervals = {};
  for (const p of PERCENTILES) ci95[`p${p}`] = percentileIntervalOfView(view, p / 100);
  if (view.count < P999_MIN_COUNT) return { ci95 };
  ci95.p999 = percentileIntervalOfView(view, 0.999);
  return { p999: percentileOfView(view, 99.9), ci95 };
}
