/**
 * Words and numbers of the search report: the swept load with its unit, an SLO as a reader writes
 * it (`Time to First Token p95 < 500 ms`), a breach, a figure.
 */
import { metricByTag } from '../metrics/registry.js';
import type { SearchBreach, SearchHistory, SearchSla } from './search-history.js';

/** What the search varies (`config.search_over`). */
export type SearchAxisName = SearchHistory['config']['search_over'];

/** `3.21`, `1,250`, `0.0512`: a figure to 4 significant digits. */
export function figure(value: number): string {
  return Number(value.toPrecision(4)).toLocaleString('en-US', { maximumFractionDigits: 6 });
}

/** The load axis' name, with its unit. */
export function loadAxisName(axis: SearchAxisName): string {
  if (axis === 'request-rate') return 'request rate (requests/s)';
  if (axis === 'concurrency') return 'concurrency (requests in flight)';
  return 'trace speed-up (×)';
}

/** One load as a reader says it: `12.5 requests/s`, `concurrency 16`, `120× speed-up`. */
export function loadText(value: number, axis: SearchAxisName): string {
  if (axis === 'request-rate') return `${figure(value)} requests/s`;
  if (axis === 'concurrency') return `concurrency ${figure(value)}`;
  return `${figure(value)}× speed-up`;
}

const OP_SIGNS: Record<string, string> = { lt: '<', le: '≤', gt: '>', ge: '≥' };

/** `<`, `≤`, `>`, `≥` for AIPerf's `lt`, `le`, `gt`, `ge`; the op itself otherwise. */
export function opSign(op: string): string {
  return OP_SIGNS[op] ?? op;
}

/** The unit of a metric tag's values: the registry's, a fraction for `request_error_rate`, else none. */
export function metricUnit(tag: string): string {
  if (tag === 'request_error_rate') return 'fraction';
  return metricByTag(tag)?.unit ?? '';
}

/** A metric tag's header (`Time to First Token`), or the tag itself when the registry lacks it. */
export function metricName(tag: string): string {
  if (tag === 'request_error_rate') return 'Request error rate';
  return metricByTag(tag)?.header ?? tag;
}

/** `500 ms`, `0.01 fraction`: a value with its metric's unit. */
export function valueWithUnit(value: number | string, tag: string): string {
  const unit = metricUnit(tag);
  const text = typeof value === 'number' ? figure(value) : value;
  return unit === '' || unit === 'fraction' ? text : `${text} ${unit}`;
}

/** An SLO as a reader writes it: `Time to First Token p95 < 500 ms`. */
export function slaText(sla: Pick<SearchSla, 'metric_tag' | 'stat' | 'op' | 'threshold'>): string {
  return `${metricName(sla.metric_tag)} ${sla.stat} ${opSign(sla.op)} ${valueWithUnit(sla.threshold, sla.metric_tag)}`;
}

/** The SLO's key, `time_to_first_token:p95`. */
export function slaKey(sla: Pick<SearchSla, 'metric_tag' | 'stat'>): string {
  return `${sla.metric_tag}:${sla.stat}`;
}

/**
 * What a probe breached: `Time to First Token p95 observed 612 ms, threshold < 500 ms`; the server
 * verdict, the attainment (`goodput`) and a run with no success read as their own words.
 */
export function breachText(b: SearchBreach): string {
  const observed = b.observed === null ? 'none' : valueWithUnit(b.observed, b.metric_tag);
  if (b.metric_tag === 'server_verdict') return `the server verdict was ${observed}`;
  if (b.metric_tag === 'request_count') return 'no request succeeded';
  if (b.metric_tag === 'goodput')
    return `SLO attainment ${observed}, required ${opSign(b.op)} ${valueWithUnit(b.threshold, b.metric_tag)}`;
  const threshold = `${opSign(b.op)} ${valueWithUnit(b.threshold, b.metric_tag)}`;
  return `${metricName(b.metric_tag)} ${b.stat} observed ${observed}, threshold ${threshold}`;
}
