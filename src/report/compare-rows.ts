/**
 * The numbers of a run comparison: key metrics of each run (whole run, and its steady-state window
 * when the summaries have one), with the difference and ratio of every later run against the first
 * (the baseline); then the words: each run's client and server verdicts and steady-state window.
 */
import { basename, resolve } from 'node:path';
import { computeStats } from '../metrics/stats.js';
import { steadyWindowS } from './steady-band.js';
import type { RunData } from './types.js';

/** One compared figure: a summary metric's statistic, over the whole run or its steady-state window. */
export interface CompareMetric {
  tag: string;
  stat: 'avg' | 'p50' | 'p99';
  label: string;
  /** `steady`: the figure of the summary's `steady_state.metrics`; the whole run's when absent. */
  window?: 'steady';
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

function steady(tag: string, stat: CompareMetric['stat'], label: string): CompareMetric {
  return { tag, stat, label: `Steady state: ${label}`, window: 'steady' };
}

/** The steady-state figures (`steady_state.metrics`), shown when some run has a steady-state section. */
export const STEADY_COMPARE_METRICS: readonly CompareMetric[] = [
  steady('request_throughput', 'avg', 'request throughput (requests/sec)'),
  steady('output_token_throughput', 'avg', 'output token throughput (tokens/sec)'),
  steady('time_to_first_token', 'p50', 'TTFT p50 (ms)'),
  steady('time_to_first_token', 'p99', 'TTFT p99 (ms)'),
  steady('request_latency', 'p50', 'request latency p50 (ms)'),
  steady('request_latency', 'p99', 'request latency p99 (ms)'),
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
  if (metric.window === 'steady') {
    const v = run.summary?.steadyState?.metrics[metric.tag]?.[metric.stat];
    return typeof v === 'number' ? v : undefined;
  }
  if (run.summary === null) return fromRecords(run, metric);
  const entry = run.summary.metrics[metric.tag];
  if (entry === undefined) return metric.tag === 'error_request_count' ? 0 : undefined;
  return entry[metric.stat];
}

/**
 * Rows of {@link COMPARE_METRICS} for `runs` (first = baseline), then those of
 * {@link STEADY_COMPARE_METRICS} when some run has a steady-state section.
 */
export function compareRows(runs: readonly RunData[]): CompareRow[] {
  const steadyToo = runs.some((r) => r.summary?.steadyState != null);
  const metrics = steadyToo ? [...COMPARE_METRICS, ...STEADY_COMPARE_METRICS] : COMPARE_METRICS;
  return metrics.map((metric) => ({ metric, values: runs.map((r) => metricOf(r, metric)) }));
}

/** A row of words, one per run (undefined when the run lacks it): a verdict, a window. */
export interface CompareTextRow {
  label: string;
  values: (string | undefined)[];
}

/** `12.3–45.6 s (72 % of the run)`, or `whole run (<reason>)` when no window was found. */
function windowText(run: RunData): string | undefined {
  const ss = run.summary?.steadyState;
  if (ss === null || ss === undefined) return undefined;
  if (ss.fallback_reason !== null) return `whole run (${ss.fallback_reason})`;
  const { fromS, toS } = steadyWindowS(ss, run.t0Ns);
  const share = Number.isFinite(ss.fraction_of_run)
    ? ` (${Math.round(ss.fraction_of_run * 100)} % of the run)`
    : '';
  return `${fromS.toFixed(1)}–${toS.toFixed(1)} s${share}`;
}

const TEXT_ROWS: readonly { label: string; of: (run: RunData) => string | undefined }[] = [
  { label: 'Client health', of: (run) => run.summary?.clientHealth?.status },
  { label: 'Server verdict', of: (run) => run.summary?.serverVerdict?.status },
  { label: 'Steady-state window', of: windowText },
];

/** The verdicts and the steady-state window of each run; a row only when some run has it. */
export function compareTextRows(runs: readonly RunData[]): CompareTextRow[] {
  return TEXT_ROWS.map((r) => ({ label: r.label, values: runs.map(r.of) })).filter((r) =>
    r.values.some((v) => v !== undefined),
  );
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
