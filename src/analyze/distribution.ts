/**
 * Summary figures of a numeric distribution as the trace analysis prints them.
 */
import { percentileSorted } from '../metrics/stats.js';

/** min, p50, p90, p99, max and mean of a distribution (numpy-linear percentiles), plus its size. */
export interface Distribution {
  count: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** The {@link Distribution} of `values`; undefined when empty. */
export function distributionOf(values: readonly number[]): Distribution | undefined {
  if (values.length === 0) return undefined;
  const sorted = Float64Array.from(values).sort();
  let sum = 0;
  for (const v of sorted) sum += v;
  return {
    count: sorted.length,
    min: sorted[0]!,
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: sum / sorted.length,
  };
}
