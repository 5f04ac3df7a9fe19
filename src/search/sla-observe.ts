/**
 * One SLO as one probe met it, read from the probe's `profile_export_aiperf.json` (the file, not the
 * run's memory, so a live search and a resumed one judge alike): the observed value, its 95 %
 * interval, the margin to the threshold at the value and at the interval's ends, and whether it passed.
 */
import { ERROR_RATE_TAG } from './config.js';
import type { Interval, Sla, SlaObservation } from './types.js';

/** A summary's metric entry: `{ unit, avg, p95, std, count, ci95: { p95: {low, high} } }`. */
type MetricEntry = Record<string, unknown> & { ci95?: Record<string, { low?: unknown; high?: unknown }> };

/** The 97.5 % quantile of the standard normal: a two-sided 95 % interval. */
const Z95 = 1.959963984540054;

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** `summary[tag].avg` of a count metric (`request_count`), 0 when absent. */
export function countOf(summary: Record<string, unknown>, tag: string): number {
  return num((summary[tag] as MetricEntry | undefined)?.avg) ?? 0;
}

/**
 * The failed fraction of a run's requests and its Wilson score 95 % interval (E. B. Wilson,
 * "Probable inference, the law of succession, and statistical inference", JASA 22, 1927), which
 * stays inside [0, 1] and is not empty at 0 or n failures. Null with no request.
 */
export function errorRate(summary: Record<string, unknown>): { observed: number; interval: Interval } | null {
  const failed = countOf(summary, 'error_request_count');
  const n = countOf(summary, 'request_count') + failed;
  if (n === 0) return null;
  const p = failed / n;
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  // At 0 failures the lower end is 0 exactly; rounding would leave 1e-17 (a value no one can read).
  const low = failed === 0 ? 0 : Math.max(0, centre - half);
  const high = failed === n ? 1 : Math.min(1, centre + half);
  return { observed: p, interval: { low, high } };
}

/** The observed value of `sla` and its interval: a percentile's ci95, the mean's ±1.96·std/√n. */
function observedOf(
  summary: Record<string, unknown>,
  sla: Sla,
): { observed: number | null; interval: Interval | null } {
  if (sla.metric_tag === ERROR_RATE_TAG) return errorRate(summary) ?? { observed: null, interval: null };
  const entry = summary[sla.metric_tag] as MetricEntry | undefined;
  if (entry === undefined) return { observed: null, interval: null };
  const observed = num(entry[sla.stat]);
  if (observed === null) return { observed, interval: null };
  if (sla.stat !== 'avg') {
    const ci = entry.ci95?.[sla.stat];
    return { observed, interval: ci === undefined ? null : { low: num(ci.low), high: num(ci.high) } };
  }
  const std = num(entry.std);
  const count = num(entry.count);
  if (std === null || count === null || count < 2) return { observed, interval: null };
  const half = (Z95 * std) / Math.sqrt(count);
  return { observed, interval: { low: observed - half, high: observed + half } };
}

/** Room left before the threshold, relative to it (types.ts {@link SlaObservation.margin}). */
export function marginOf(sla: Sla, value: number | null): number | null {
  if (value === null) return null;
  const room = sla.op === 'lt' || sla.op === 'le' ? sla.threshold - value : value - sla.threshold;
  return sla.threshold === 0 ? room : room / Math.abs(sla.threshold);
}

/** Whether `value` meets `sla`; a missing value does not. */
export function meets(sla: Sla, value: number | null): boolean {
  if (value === null) return false;
  switch (sla.op) {
    case 'lt':
      return value < sla.threshold;
    case 'le':
      return value <= sla.threshold;
    case 'gt':
      return value > sla.threshold;
    case 'ge':
      return value >= sla.threshold;
  }
}

/**
 * `sla` as the run of `summary` (a parsed `profile_export_aiperf.json`) met it. The pessimistic
 * end of the interval (the high end for `lt`/`le`) gives `margin_interval.low`.
 */
export function observeSla(summary: Record<string, unknown>, sla: Sla): SlaObservation {
  const { observed, interval } = observedOf(summary, sla);
  const upper = sla.op === 'lt' || sla.op === 'le';
  const pessimistic = interval === null ? null : upper ? interval.high : interval.low;
  const optimistic = interval === null ? null : upper ? interval.low : interval.high;
  return {
    key: `${sla.metric_tag}:${sla.stat}`,
    observed,
    interval,
    margin: marginOf(sla, observed),
    margin_interval:
      interval === null ? null : { low: marginOf(sla, pessimistic), high: marginOf(sla, optimistic) },
    passed: meets(sla, observed),
  };
}
