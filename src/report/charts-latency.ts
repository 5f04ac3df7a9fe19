/**
 * Latency charts: TTFT, ITL and request latency per request over time (scatter), and their CDFs
 * (single run, or one line per run for comparisons).
 */
import type { EChartsOption } from 'echarts';
import {
  baseOption,
  type ChartSpec,
  compact,
  countSubtitle,
  roundS,
  timeAxis,
  valueAxis,
} from './chart-base.js';
import { downsample, sampleIndices } from './downsample.js';
import type { RequestPoint } from './types.js';

/** A per-request latency metric the charts know. */
export interface LatencyMetric {
  /** Id prefix: `ttft`, `itl`, `latency`. */
  id: string;
  label: string;
  /** Field of {@link RequestPoint}, in ms. */
  field: 'ttftMs' | 'itlMs' | 'latencyMs';
}

/** TTFT, ITL and request latency, in report order. */
export const LATENCY_METRICS: readonly LatencyMetric[] = [
  { id: 'ttft', label: 'Time to first token', field: 'ttftMs' },
  { id: 'itl', label: 'Inter-token latency', field: 'itlMs' },
  { id: 'latency', label: 'Request latency', field: 'latencyMs' },
];

/** Finite values of `metric` over the requests that have it. */
export function metricValues(requests: readonly RequestPoint[], metric: LatencyMetric): number[] {
  const out: number[] = [];
  for (const r of requests) {
    const v = r[metric.field];
    if (v !== undefined && Number.isFinite(v)) out.push(v);
  }
  return out;
}

/**
 * `metric` of each request against its start time (s since the first request). Null when no request
 * has the metric (e.g. TTFT in a non-streaming run).
 */
export function overTimeChart(requests: readonly RequestPoint[], metric: LatencyMetric): ChartSpec | null {
  const all: [number, number][] = [];
  for (const r of requests) {
    const v = r[metric.field];
    if (v !== undefined && Number.isFinite(v)) all.push([r.startS, v]);
  }
  if (all.length === 0) return null;
  all.sort((a, b) => a[0] - b[0]);
  const data = downsample(all).map(([t, v]) => [roundS(t), compact(v)]);
  const title = `${metric.label} over time`;
  const option: EChartsOption = {
    ...baseOption(title, countSubtitle(data.length, all.length)),
    xAxis: timeAxis(),
    yAxis: valueAxis(`${metric.label} (ms)`, { nameGap: 62 }),
    dataZoom: [{ type: 'inside' }],
    series: [{ type: 'scatter', name: metric.label, symbolSize: 4, data, large: all.length > 5000 }],
  };
  return { id: `${metric.id}-over-time`, title, option, points: data.length };
}

/** Most points of one CDF line (ranks evenly spaced; a CDF needs no more to look exact). */
export const MAX_CDF_POINTS = 2_000;

/** CDF points `[value, percent ≤ value]` of `values`, downsampled by rank (the maximum is kept). */
export function cdfPoints(values: readonly number[], max: number = MAX_CDF_POINTS): number[][] {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  return sampleIndices(n, max).map((i) => [compact(sorted[i]!), compact(((i + 1) / n) * 100)]);
}

/** One named distribution for an overlaid CDF. */
export interface NamedValues {
  name: string;
  values: readonly number[];
}

/**
 * CDF chart of one or more distributions of `metric` (one line each, legend when more than one).
 * Null when every distribution is empty.
 */
export function cdfChart(
  metric: LatencyMetric,
  sets: readonly NamedValues[],
  idPrefix = '',
): ChartSpec | null {
  const present = sets.filter((s) => s.values.length > 0);
  if (present.length === 0) return null;
  const series = present.map((s) => ({
    type: 'line' as const,
    name: s.name,
    showSymbol: false,
    step: 'end' as const,
    data: cdfPoints(s.values),
  }));
  const shown = series.reduce((sum, s) => sum + s.data.length, 0);
  const total = present.reduce((sum, s) => sum + s.values.length, 0);
  const title = `${metric.label} CDF`;
  const option: EChartsOption = {
    ...baseOption(title, countSubtitle(shown, total)),
    tooltip: { trigger: 'axis' },
    xAxis: valueAxis(`${metric.label} (ms)`),
    yAxis: valueAxis('share ≤ x (%)', { min: 0, max: 100, scale: false, nameGap: 62 }),
    series,
    ...(present.length > 1
      ? {
          legend: { top: 55, itemGap: 24 },
          grid: { left: 80, right: 40, top: 95, bottom: 55, containLabel: true },
        }
      : {}),
  };
  return { id: `${idPrefix}${metric.id}-cdf`, title, option, points: shown };
}
