/**
 * Load charts on 1 s bins: output token throughput and requests in flight; schedule lag per request;
 * failed requests per bin by error type.
 */
import type { EChartsOption } from 'echarts';
import { binLayout, errorBins, inFlightBins, outputThroughputBins, runSpanS } from './bins.js';
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
import { downsample } from './downsample.js';
import type { BinPoint, RequestPoint } from './types.js';

function binNote(widthS: number): string {
  return `${widthS} s bins`;
}

function binnedLine(
  id: string,
  title: string,
  sub: string,
  yName: string,
  widthS: number,
  values: number[],
  endS: number,
): ChartSpec {
  // Bin i spans [i·w, (i+1)·w): a step drawn at each bin start, plus a closing point for the last bin.
  const data = values.map((v, i) => [roundS(i * widthS), compact(v)]);
  data.push([roundS(values.length * widthS), compact(values[values.length - 1] ?? 0)]);
  const option: EChartsOption = {
    ...baseOption(title, sub),
    tooltip: { trigger: 'axis' },
    xAxis: timeAxis(endS),
    yAxis: valueAxis(yName, { min: 0, scale: false, nameGap: 62 }),
    dataZoom: [{ type: 'inside' }],
    series: [
      { type: 'line', name: title, step: 'end', showSymbol: false, areaStyle: { opacity: 0.15 }, data },
    ],
  };
  return { id, title, option, points: data.length, group: TIME_GROUP };
}

/**
 * Output tokens per second over time: each successful request's output tokens spread evenly over its
 * generation phase (first token → end). Null without any output tokens.
 */
export function throughputChart(requests: Iterable<BinPoint>): ChartSpec | null {
  if (!some(requests, (r) => r.error === null && (r.osl ?? 0) > 0)) return null;
  const layout = binLayout(runSpanS(requests));
  const values = outputThroughputBins(requests, layout);
  const sub = subtitle(binNote(layout.widthS), 'tokens spread evenly from first token to end');
  return binnedLine(
    'output-throughput-over-time',
    'Output token throughput over time',
    sub,
    'tokens/s',
    layout.widthS,
    values,
    timeAxisEndS(requests),
  );
}

/** Mean requests in flight per bin (time-weighted). Null with no requests. */
export function inFlightChart(requests: Iterable<BinPoint>): ChartSpec | null {
  if (!some(requests, () => true)) return null;
  const layout = binLayout(runSpanS(requests));
  const sub = subtitle(binNote(layout.widthS), 'time-weighted mean per bin');
  return binnedLine(
    'in-flight-over-time',
    'Requests in flight over time',
    sub,
    'requests',
    layout.widthS,
    inFlightBins(requests, layout),
    timeAxisEndS(requests),
  );
}

/**
 * Schedule lag (on the wire − scheduled, ms) against the scheduled time, and beside it the part of
 * it spent waiting for a connection (on the wire − request start). Null when no request has a lag.
 */
export function scheduleLagChart(
  requests: readonly RequestPoint[],
  axisEndS: number = timeAxisEndS(requests),
): ChartSpec | null {
  const lag: [number, number][] = [];
  const wait: [number, number][] = [];
  for (const r of requests) {
    if (r.scheduleLagMs === undefined) continue;
    const t = r.scheduledS ?? r.startS;
    lag.push([t, r.scheduleLagMs]);
    if (r.connectionWaitMs !== undefined) wait.push([t, r.connectionWaitMs]);
  }
  if (lag.length === 0) return null;
  const points = (all: [number, number][]) =>
    downsample(all.sort((a, b) => a[0] - b[0])).map(([t, v]) => [roundS(t), compact(v)]);
  const lagData = points(lag);
  const waitData = points(wait);
  const title = 'Schedule lag over time';
  const sub = 'on the wire − scheduled; connection wait: on the wire − request start';
  const large = lag.length > 5000;
  const option: EChartsOption = {
    ...baseOption(title, subtitle(countSubtitle(lagData.length, lag.length), sub)),
    xAxis: timeAxis(axisEndS),
    yAxis: valueAxis('ms', { nameGap: 62 }),
    legend: { top: 55, itemGap: 24 },
    dataZoom: [{ type: 'inside' }],
    series: [
      { type: 'scatter', name: 'schedule lag', symbolSize: 4, data: lagData, large },
      { type: 'scatter', name: 'connection wait', symbolSize: 3, data: waitData, large },
    ],
  };
  return {
    id: 'schedule-lag-over-time',
    title,
    option,
    points: lagData.length + waitData.length,
    group: TIME_GROUP,
  };
}

/** Whether some of `requests` satisfies `test`. */
function some(requests: Iterable<BinPoint>, test: (r: BinPoint) => boolean): boolean {
  for (const r of requests) if (test(r)) return true;
  return false;
}

/** Failed requests per bin (by end time), stacked by error type. Null when nothing failed. */
export function errorTimelineChart(requests: Iterable<BinPoint>): ChartSpec | null {
  let failed = 0;
  for (const r of requests) if (r.error !== null) failed++;
  if (failed === 0) return null;
  const layout = binLayout(runSpanS(requests));
  const series = [...errorBins(requests, layout).entries()].map(([type, bins]) => ({
    type: 'bar' as const,
    name: type,
    stack: 'errors',
    barCategoryGap: '0%',
    // Dense (zeros included): echarts stacks value-axis bars by data index, so every series needs
    // the same bins at the same indices.
    data: bins.map((n, i) => [roundS((i + 0.5) * layout.widthS), n]),
  }));
  const points = series.reduce((sum, s) => sum + s.data.length, 0);
  const title = 'Errors over time';
  const option: EChartsOption = {
    ...baseOption(
      title,
      subtitle(`${failed.toLocaleString('en-US')} failed requests`, binNote(layout.widthS), 'by error type'),
    ),
    tooltip: { trigger: 'axis' },
    legend: { top: 55, itemGap: 24 },
    grid: { left: 80, right: 40, top: 95, bottom: 55, containLabel: true },
    xAxis: timeAxis(timeAxisEndS(requests)),
    yAxis: valueAxis('failed requests per bin', { min: 0, scale: false, minInterval: 1, nameGap: 62 }),
    dataZoom: [{ type: 'inside' }],
    series,
  };
  return { id: 'errors-over-time', title, option, points, group: TIME_GROUP };
}
