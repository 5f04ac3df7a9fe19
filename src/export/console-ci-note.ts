/**
 * The console's footnote under the metrics table naming each metric whose p99 the run cannot pin
 * down: its 95 % interval (metrics/percentile-ci.ts) has a bound that does not exist, or spans more
 * than {@link P99_WIDE_FRACTION} of the p99 itself. A metric whose min and max print the same (to the
 * console's 2 decimals) is never named: its row shows no spread to be unsure of.
 */
import type { StatsSummary } from '../metrics/summary.js';
import type { MetricDef } from '../metrics/types.js';
import { formatConsoleNumber } from './format.js';

/** Share of its p99 that a p99's 95 % interval may span before the console marks it. */
export const P99_WIDE_FRACTION = 0.2;

/** Whether `m`'s p99 interval is open-ended or spans more than {@link P99_WIDE_FRACTION} of p99. */
function isWide(m: StatsSummary): boolean {
  const ci = m.ci95?.p99;
  if (ci === undefined || formatConsoleNumber(m.min) === formatConsoleNumber(m.max)) return false;
  if (ci.low === null || ci.high === null) return true;
  return ci.high - ci.low > P99_WIDE_FRACTION * Math.abs(m.p99);
}

/**
 * How many of n values rank above the numpy-linear p99 (interpolated between the values at
 * 0-based positions ⌊0.99·(n − 1)⌋ and the next): n − 1 − ⌊0.99·(n − 1)⌋.
 */
function ranksAboveP99(n: number): number {
  return n - 1 - Math.floor(0.99 * (n - 1));
}

const bound = (v: number | null): string => (v === null ? 'none' : formatConsoleNumber(v));

function entry(def: MetricDef, m: StatsSummary): string {
  const ci = m.ci95?.p99 ?? { low: null, high: null };
  return `${def.header} (${ranksAboveP99(m.count)} of ${m.count} values rank above it; 95 % interval ${bound(ci.low)} to ${bound(ci.high)} ${m.unit})`;
}

/**
 * One line naming every metric of `rows` (in their order) whose p99 is uncertain, e.g. `Note: p99
 * rests on few values for Time to First Token (3 of 300 values rank above it; 95 % interval 1.02 to
 * none ms).` — `none` where a bound does not exist; null when no p99 is uncertain.
 */
export function p99Note(rows: ReadonlyArray<{ def: MetricDef; m: StatsSummary }>): string | null {
  const wide = rows.filter(({ m }) => isWide(m));
  if (wide.length === 0) return null;
  const pct = Math.round(P99_WIDE_FRACTION * 100);
  return `Note: p99 rests on few values (its 95 % interval is open-ended or wider than ${pct} % of it) for ${wide.map(({ def, m }) => entry(def, m)).join(', ')}.`;
}
