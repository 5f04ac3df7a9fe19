/**
 * Time-slice charts (`--slice-duration`, `profile_export_aiperf_timeslices.json`) on the run's
 * shared time axis: per-slice request and output token throughput, and per-slice TTFT and request
 * latency p50/p99. Each slice's value is drawn flat across its window; a window without requests
 * has no slice and leaves a gap.
 */
import type { EChartsOption } from 'echarts';
import type { SlicePoint } from './analysis-types.js';
import {
  baseOption,
  type ChartSpec,
  compact,
  roundS,
  subtitle,
  TIME_GROUP,
  timeAxis,
  valueAxis,
} from './chart-base.js';

/** One series: a label, a metric tag and its statistic. */
interface SliceSeries {
  name: string;
  tag: string;
  stat: string;
  /** 1 for the right-hand axis. */
  yAxisIndex?: number;
}

/** A gap in a line (echarts' blank value). */
const GAP = '-';

/**
 * `[t, value]` points of one series: each slice flat from its start to its end, a gap before a slice
 * that does not start where the last one ended, nothing for a slice without the statistic.
 */
function seriesData(slices: readonly SlicePoint[], tag: string, stat: string): (number | string)[][] {
  const out: (number | string)[][] = [];
  let lastEndS: number | null = null;
  for (const s of slices) {
    const v = (s.metrics[tag] as Record<string, unknown> | undefined)?.[stat];
    if (typeof v !== 'number') {
      lastEndS = null;
      continue;
    }
    if (lastEndS !== null && s.startS - lastEndS > 1e-3) out.push([roundS(lastEndS), GAP]);
    out.push([roundS(Math.max(0, s.startS)), compact(v)], [roundS(s.endS), compact(v)]);
    lastEndS = s.endS;
  }
  return out;
}

function sliceNote(slices: readonly SlicePoint[]): string {
  const first = slices[0];
  const width = first === undefined ? '' : `${Number((first.endS - first.startS).toFixed(3))} s slices`;
  return subtitle(
    `${slices.length.toLocaleString('en-US')} slices`,
    width,
    'a request counts in the slice it started in',
  );
}

function sliceChart(
  id: string,
  title: string,
  slices: readonly SlicePoint[],
  series: readonly SliceSeries[],
  yAxis: Record<string, unknown>[],
  endS: number,
): ChartSpec | null {
  const drawn = series
    .map((s) => ({
      type: 'line' as const,
      name: s.name,
      showSymbol: false,
      yAxisIndex: s.yAxisIndex ?? 0,
      data: seriesData(slices, s.tag, s.stat),
    }))
    .filter((s) => s.data.length > 0);
  if (drawn.length === 0) return null;
  const option: EChartsOption = {
    ...baseOption(title, sliceNote(slices)),
    tooltip: { trigger: 'axis' },
    legend: { top: 55, itemGap: 24 },
    // A right-hand axis needs room; without one the plot spans as the other time charts do.
    grid: { left: 80, right: yAxis.length > 1 ? 80 : 40, top: 95, bottom: 55, containLabel: true },
    xAxis: timeAxis(endS),
    yAxis: yAxis as EChartsOption['yAxis'],
    dataZoom: [{ type: 'inside' }],
    series: drawn,
  };
  const points = drawn.reduce((sum, s) => sum + s.data.length, 0);
  return { id, title, option, points, group: TIME_GROUP };
}

/** Request throughput (left axis) and output token throughput (right axis) per slice; null without slices. */
export function sliceThroughputChart(slices: readonly SlicePoint[], endS: number): ChartSpec | null {
  return sliceChart(
    'slice-throughput-over-time',
    'Throughput per time slice',
    slices,
    [
      { name: 'requests/s', tag: 'request_throughput', stat: 'avg' },
      { name: 'output tokens/s', tag: 'output_token_throughput', stat: 'avg', yAxisIndex: 1 },
    ],
    [
      valueAxis('requests/s', { min: 0, scale: false, nameGap: 55 }),
      valueAxis('output tokens/s', { min: 0, scale: false, nameGap: 55, splitLine: { show: false } }),
    ],
    endS,
  );
}

/** TTFT and request latency p50/p99 per slice, ms; null without slices. */
export function sliceLatencyChart(slices: readonly SlicePoint[], endS: number): ChartSpec | null {
  return sliceChart(
    'slice-latency-over-time',
    'Latency per time slice',
    slices,
    [
      { name: 'TTFT p50', tag: 'time_to_first_token', stat: 'p50' },
      { name: 'TTFT p99', tag: 'time_to_first_token', stat: 'p99' },
      { name: 'request latency p50', tag: 'request_latency', stat: 'p50' },
      { name: 'request latency p99', tag: 'request_latency', stat: 'p99' },
    ],
    [valueAxis('ms', { min: 0, scale: false, nameGap: 62 })],
    endS,
  );
}
