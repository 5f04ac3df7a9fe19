/**
 * The numbers of a run comparison: key metrics of each run, with the difference and ratio of every
 * later run against the first (the baseline).
 */
import { basename, resolve } from 'node:path';
import { computeStats } from '../metrics/stats.js';
import type { RunData } from './types.js';

/** One compared figure: a summary metric's statistic. */
export interface CompareMetric {
  tag: string;
  stat: 'avg' | 'p50' | 'p99';
  label: string;
}

function percentiles(tag: string, name: string): CompareMetric[] {
  return (['avg', 'p50', 'p99'] as const).map((stat) => ({ tag, stat, label: `${name} ${stat} (ms)` }));
}

/** The compared figures, in table order. */
export const COMPARE_METRICS: readonly CompareMetric[] = [
  ...percentiles('time_to_first_token', 'TTFT'),
  ...percentiles('inter_token_latency', 'ITL'),
  ...percentiles('request_latency', 'Request latency'),
  { tag: 'output_token_throughput', stat: 'avg', label: 'Output token throughput (tokens/sec)' },
  { tag: 'total_token_throughput', stat: 'avg', label: 'Total token throughput (tokens/sec)' },
  { tag: 'request_throughput', stat: 'avg', label: 'Request throughput (requests/sec)' },
  { tag: 'request_count', stat: 'avg', label: 'Request count' },
  { tag: 'error_request_count', stat: 'avg', label: 'Error count' },
];

/** One table row: the value of each run (undefined when the run lacks it). */
export interface CompareRow {
  metric: CompareMetric;
  values: (number | undefined)[];
}

const RECORD_FIELDS: Record<string, 'ttftMs' | 'itlMs' | 'latencyMs'> = {
  time_to_first_token: 'ttftMs',
  inter_token_latency: 'itlMs',
  request_latency: 'latencyMs',
};

/** A metric's statistic from the records, for runs without a summary file. */
function fromRecords(run: RunData, metric: CompareMetric): number | undefined {
  if (metric.tag === 'error_request_count') return run.requests.filter((r) => r.error !== null).length;
  if (metric.tag === 'request_count') return run.requests.filter((r) => r.error === null).length;
  const field = RECORD_FIELDS[metric.tag];
  if (field === undefined) return undefined;
  const values = run.requests.flatMap((r) => (r[field] === undefined ? [] : [r[field]]));
  return computeStats(Float64Array.from(values))?.[metric.stat];
}

/** The value of `metric` in `run`: from the summary JSON when present, else from the records. */
export function metricOf(run: RunData, metric: CompareMetric): number | undefined {
  if (run.summary === null) return fromRecords(run, metric);
  const entry = run.summary.metrics[metric.tag];
  if (entry === undefined) return metric.tag === 'error_request_count' ? 0 : undefined;
  return entry[metric.stat];
}

/** Rows of {@link COMPARE_METRICS} for `runs` (first = baseline). */
export function compareRows(runs: readonly RunData[]): CompareRow[] {
  return COMPARE_METRICS.map((metric) => ({ metric, values: runs.map((r) => metricOf(r, metric)) }));
}

/** `value − base`; undefined when either is missing. */
export function delta(value: number | undefined, base: number | undefined): number | undefined {
  return value === undefined || base === undefined ? undefined : value - base;
}

/** `value / base`; undefined when either is missing or the base is 0. */
export function ratio(value: number | undefined, base: number | undefined): number | undefined {
  return value === undefined || base === undefined || base === 0 ? undefined : value / base;
}

/** Short names for runs: directory base names, or the resolved paths when base names collide. */
export function runNames(dirs: readonly string[]): string[] {
  const bases = dirs.map((d) => basename(resolve(d)));
  const unique = new Set(bases).size === bases.length;
  return unique ? bases : dirs.map((d) => resolve(d));
}
