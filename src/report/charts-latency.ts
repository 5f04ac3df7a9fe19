/**
 * Latency charts: TTFT, ITL and request latency per request over time (scatter), and their CDFs
 * (single run, or one line per run for comparisons).
 */
import type { EChartsOption } from 'echarts';
import { percentileSorted } from '../metrics/stats.js';
import {
  baseOption,
  type ChartSpec,
  compact,
  countSubtitle,
  roundS,
  subtitle,
  TIME_GROUP,
  timeAxis,
  timeAxisEndS,
  valueAxis,
} from './chart-base.js';
import { downsample, sampleIndices } from './downsample.js';
import type { RequestPoint, SummaryMetric } from './types.js';
import type { SampledValues } from './value-sample.js';

/** A per-request latency metric the charts know. */
export interface LatencyMetric {
  /** Id prefix: `ttft`, `itl`, `latency`. */
  id: string;
  /** Its tag in the summary. */
  tag: string;
  label: string;
  /** Field of {@link RequestPoint}, in ms. */
  field: 'ttftMs' | 'itlMs' | 'latencyMs';
}

/** TTFT, ITL and request latency, in report order. */
export const LATENCY_METRICS: readonly LatencyMetric[] = [
  { id: 'ttft', tag: 'time_to_first_token', label: 'Time to first token', field: 'ttftMs' },
  { id: 'itl', tag: 'inter_token_latency', label: 'Inter-token latency', field: 'itlMs' },
  { id: 'latency', tag: 'request_latency', label: 'Request latency', field: 'latencyMs' },
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
export function overTimeChart(
  requests: readonly RequestPoint[],
  metric: LatencyMetric,
  axisEndS: number = timeAxisEndS(requests),
): ChartSpec | null {
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
    xAxis: timeAxis(axisEndS),
    yAxis: valueAxis(`${metric.label} (ms)`, { nameGap: 62 }),
    dataZoom: [{ type: 'inside' }],
    series: [{ type: 'scatter', name: metric.label, symbolSize: 4, data, large: all.length > 5000 }],
  };
  return { id: `${metric.id}-over-time`, title, option, points: data.length, group: TIME_GROUP };
}

/** Most points of one CDF line (ranks evenly spaced; a CDF needs no more to look exact). */
export const MAX_CDF_POINTS = 2_000;

/** CDF points `[value, percent ≤ value]` of `values`, downsampled by rank (the maximum is kept). */
export function cdfPoints(values: readonly number[], max: number = MAX_CDF_POINTS): number[][] {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  return sampleIndices(n, max).map((i) => [compact(sorted[i]!), compact(((i + 1) / n) * 100)]);
}

/** The percentiles a CDF marks, in the values' unit. */
export interface CdfMarks {
  p50: number;
  p90: number;
  p99: number;
}

/** The percentile keys a CDF marks, in order. */
const MARKED = ['p50', 'p90', 'p99'] as const;

/** numpy-linear p50/p90/p99 of non-empty `values` (as every metric's: metrics/stats.ts). */
export function cdfMarksOf(values: readonly number[]): CdfMarks {
  const sorted = Float64Array.from(values).sort();
  return {
    p50: percentileSorted(sorted, 50),
    p90: percentileSorted(sorted, 90),
    p99: percentileSorted(sorted, 99),
  };
}

/** One named distribution for an overlaid CDF. */
export interface NamedValues {
  name: string;
  values: readonly number[];
  /** The marked percentiles; default: those of `values` ({@link cdfMarksOf}). */
  marks?: CdfMarks;
}

/** Options of {@link cdfChart}. */
export interface CdfOptions {
  /** Prefix of the chart id (`compare-`). */
  idPrefix?: string;
  /** What one value is, for the subtitle; default `requests`. */
  noun?: string;
  /** Extra subtitle text. */
  note?: string;
  /**
   * A logarithmic x axis: points and marks at 0 ms are not drawn (the line starts at the share of
   * values at 0, as it should), the say-so is the caller's note.
   */
  logX?: boolean;
}

/** Where each mark's label sits along its line: low, middle, high, so close marks stay readable. */
const LABEL_AT = { p50: 'insideStart', p90: 'insideMiddle', p99: 'insideEnd' } as const;

/**
 * Which side of its vertical line a mark's label goes, so it stays inside the plot area: right of a
 * line in the left half of the values' range (`Bottom`, for a line drawn upwards), left of one in the
 * right half (`Top`). A label on the left of a line near the y axis would be drawn over the axis.
 */
function labelSide(x: number, extent: readonly [number, number]): 'Top' | 'Bottom' {
  const [lo, hi] = extent;
  return x - lo <= (hi - lo) / 2 ? 'Bottom' : 'Top';
}

/** Smallest and largest of `values` (non-empty), without spreading a large array. */
function extentOf(values: readonly number[]): [number, number] {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [Math.min(lo, 0), hi];
}

/**
 * Dashed vertical lines at p50, p90 and p99, labelled with their values inside the plot area.
 * @param extent - the smallest (or 0) and largest value drawn: where the x axis spans.
 */
function markLineOf(
  marks: CdfMarks,
  extent: readonly [number, number],
  logX: boolean,
): Record<string, unknown> {
  return {
    symbol: 'none',
    silent: true,
    lineStyle: { type: 'dashed', width: 1 },
    label: { formatter: '{b} {c}', fontSize: 11 },
    data: MARKED.filter((k) => !logX || marks[k] > 0).map((k) => ({
      name: k,
      xAxis: compact(marks[k]),
      label: { position: `${LABEL_AT[k]}${labelSide(marks[k], extent)}` },
    })),
  };
}

/**
 * CDF chart of one or more distributions of `metric` (one line each, legend when more than one),
 * each marking its p50, p90 and p99. Null when every distribution is empty.
 */
export function cdfChart(
  metric: Pick<LatencyMetric, 'id' | 'label'>,
  sets: readonly NamedValues[],
  options: CdfOptions = {},
): ChartSpec | null {
  const present = sets.filter((s) => s.values.length > 0);
  if (present.length === 0) return null;
  const logX = options.logX === true;
  const series = present.map((s) => ({
    type: 'line' as const,
    name: s.name,
    showSymbol: false,
    step: 'end' as const,
    data: logX ? cdfPoints(s.values).filter((p) => (p[0] ?? 0) > 0) : cdfPoints(s.values),
    markLine: markLineOf(s.marks ?? cdfMarksOf(s.values), extentOf(s.values), logX),
  }));
  const shown = series.reduce((sum, s) => sum + s.data.length, 0);
  const total = present.reduce((sum, s) => sum + s.values.length, 0);
  const title = `${metric.label} CDF`;
  const sub = subtitle(countSubtitle(shown, total, options.noun), 'marks: p50, p90, p99', options.note ?? '');
  const option: EChartsOption = {
    ...baseOption(title, sub),
    tooltip: { trigger: 'axis' },
    xAxis: logX
      ? valueAxis(`${metric.label} (ms, log scale)`, { type: 'log', scale: false })
      : valueAxis(`${metric.label} (ms)`),
    yAxis: valueAxis('share ≤ x (%)', { min: 0, max: 100, scale: false, nameGap: 62 }),
    series,
    ...(present.length > 1
      ? {
          legend: { top: 55, itemGap: 24 },
          grid: { left: 80, right: 40, top: 95, bottom: 55, containLabel: true },
        }
      : {}),
  };
  return { id: `${options.idPrefix ?? ''}${metric.id}-cdf`, title, option, points: shown };
}

/** The inter-chunk latency, per chunk gap (a record's `inter_chunk_latency` list). */
export const ICL_METRIC = { id: 'icl', label: 'Inter-chunk latency (per chunk)' } as const;

/**
 * A linear axis squashes the body of a distribution into less than a tenth of its width when the
 * largest value is more than this many times the p99: the inter-chunk CDF then uses a log axis.
 */
export const LOG_AXIS_MAX_OVER_P99 = 10;

/** The log-axis note when `values` need one ({@link LOG_AXIS_MAX_OVER_P99}); null otherwise. */
function logAxisNote(values: readonly number[], p99: number): string | null {
  const [, max] = extentOf(values);
  if (!(p99 > 0) || max <= LOG_AXIS_MAX_OVER_P99 * p99) return null;
  const times = Math.round(max / p99).toLocaleString('en-US');
  return `log x axis: the largest gap (${compact(max)} ms) is ${times}× the p99`;
}

/**
 * CDF of every gap between consecutive chunks (`inter_chunk_latency`), to read beside the
 * per-request ITL CDF: a request's ITL is the mean of its gaps, so a stall hides in it and shows
 * here. Drawn from a bounded sample of the gaps (value-sample.ts); when the sample dropped some, the
 * marks are the summary's percentiles over all of them, when it has them. The x axis is logarithmic,
 * and the subtitle says so, when the largest gap is more than {@link LOG_AXIS_MAX_OVER_P99}× the
 * p99 (one stall would otherwise squash every other gap against the y axis). Null without any gap.
 */
export function interChunkLatencyChart(
  sample: SampledValues,
  summaryMetric: SummaryMetric | undefined,
): ChartSpec | null {
  if (sample.values.length === 0) return null;
  const sampled = sample.values.length < sample.total;
  const fromSummary = sampled ? summaryMarks(summaryMetric) : null;
  const sampleNote = sampled
    ? `a sample of ${sample.values.length.toLocaleString('en-US')} of ${sample.total.toLocaleString('en-US')} gaps${fromSummary === null ? '' : '; marks: the summary’s, over all gaps'}`
    : '';
  const logNote = logAxisNote(sample.values, (fromSummary ?? cdfMarksOf(sample.values)).p99);
  return cdfChart(
    ICL_METRIC,
    [
      {
        name: ICL_METRIC.label,
        values: sample.values,
        ...(fromSummary === null ? {} : { marks: fromSummary }),
      },
    ],
    {
      noun: 'gaps between chunks',
      note: subtitle(sampleNote, logNote ?? ''),
      logX: logNote !== null,
    },
  );
}

/** p50/p90/p99 of a summary metric; null when it lacks any. */
/** p50/p90/p99 of a summary metric (over every value); null when it lacks them. */
export function summaryMarks(m: SummaryMetric | undefined): CdfMarks | null {
  if (m?.p50 === undefined || m.p90 === undefined || m.p99 === undefined) return null;
  return { p50: m.p50, p90: m.p90, p99: m.p99 };
}
