/**
 * The charts of a search report: one per SLO, its observed value (each probe a point, its interval
 * as an error bar) against the load, points colored and shaped by the probe's status, the
 * threshold as a dashed line labelled with its op, the boundary marked (a vertical line at a point
 * boundary, a shaded band between the largest pass and the first fail at a cliff, a dotted line at
 * the fitted boundary) and a ring around the probes whose server verdict was `overloaded`.
 */
import type { EChartsOption } from 'echarts';
import { baseOption, type ChartSpec, compact, subtitle, valueAxis } from './chart-base.js';
import { observationOf, type SearchHistory, type SearchIteration, type SearchSla } from './search-history.js';
import {
  figure,
  loadAxisName,
  loadText,
  metricName,
  metricUnit,
  opSign,
  slaText,
  valueWithUnit,
} from './search-text.js';

/** The x axis is logarithmic when the range's high end is at least this many times its low end. */
export const LOG_AXIS_RATIO = 20;

/** How each probe status is drawn. */
const STATUS_STYLE: Record<SearchIteration['status'], { name: string; color: string; symbol: string }> = {
  pass: { name: 'pass', color: '#12b76a', symbol: 'circle' },
  fail: { name: 'fail', color: '#d92d20', symbol: 'triangle' },
  client_limited: { name: 'client-limited', color: '#f5a524', symbol: 'diamond' },
  interrupted: { name: 'interrupted', color: '#98a2b3', symbol: 'rect' },
};

type Series = Record<string, unknown> & { data: unknown[] };

/** One plotted probe: its load, the value observed, the interval's ends. */
interface Plotted {
  it: SearchIteration;
  x: number;
  y: number;
  low: number | null;
  high: number | null;
}

/** True when the load axis is drawn logarithmic: positive loads spanning at least {@link LOG_AXIS_RATIO}×. */
export function logLoadAxis(h: SearchHistory): boolean {
  const { lo, hi } = h.config.range;
  const loads = h.iterations.map((i) => i.load);
  return lo > 0 && loads.every((l) => l > 0) && hi / lo >= LOG_AXIS_RATIO;
}

function plotted(h: SearchHistory, sla: SearchSla, index: number): { points: Plotted[]; missing: number } {
  const points: Plotted[] = [];
  let missing = 0;
  for (const it of h.iterations) {
    const o = observationOf(it, sla, index);
    if (o === undefined || o.observed === null) {
      missing += 1;
      continue;
    }
    const low = o.interval?.low ?? null;
    const high = o.interval?.high ?? null;
    points.push({ it, x: it.load, y: compact(o.observed), low, high });
  }
  return { points, missing };
}

function statusSeries(points: readonly Plotted[]): Series[] {
  const out: Series[] = [];
  for (const [status, style] of Object.entries(STATUS_STYLE)) {
    const mine = points.filter((p) => p.it.status === status);
    if (mine.length === 0) continue;
    out.push({
      name: style.name,
      type: 'scatter',
      symbol: style.symbol,
      symbolSize: 11,
      itemStyle: { color: style.color },
      z: 4,
      data: mine.map((p) => ({ name: p.it.folder, value: [p.x, p.y] })),
    });
  }
  return out;
}

/** The intervals as vertical segments of one line series, broken between probes (`-`). */
function intervalSeries(points: readonly Plotted[]): Series | null {
  const data: unknown[] = [];
  for (const p of points) {
    if (p.low === null && p.high === null) continue;
    data.push([p.x, compact(p.low ?? p.y)], [p.x, compact(p.high ?? p.y)], [p.x, '-']);
  }
  if (data.length === 0) return null;
  return {
    name: '95 % interval',
    type: 'line',
    symbol: 'none',
    silent: true,
    connectNulls: false,
    lineStyle: { color: '#475467', width: 1.5 },
    itemStyle: { color: '#475467' },
    tooltip: { show: false },
    z: 3,
    data,
  };
}

function overloadedSeries(points: readonly Plotted[]): Series | null {
  const mine = points.filter((p) => p.it.server_verdict?.status === 'overloaded');
  if (mine.length === 0) return null;
  return {
    name: 'server overloaded',
    type: 'scatter',
    symbol: 'emptyCircle',
    symbolSize: 22,
    itemStyle: { color: '#7a271a', borderWidth: 2 },
    // Under the status marks, so the ring's white fill does not hide the probe's own mark.
    z: 3,
    data: mine.map((p) => ({ name: p.it.folder, value: [p.x, p.y] })),
  };
}

/** The boundary's marks: a point's vertical line, a cliff's band, the fitted boundary's dotted line. */
function boundaryMarks(h: SearchHistory): Record<string, unknown> {
  const b = h.boundary_summary ?? null;
  const axis = h.config.search_over;
  const lines: unknown[] = [];
  const marks: Record<string, unknown> = {};
  const max = b?.feasible_max ?? null;
  const min = b?.infeasible_min ?? null;
  if (b?.boundary_type === 'point' && max !== null)
    lines.push({
      name: 'boundary',
      xAxis: max.value,
      lineStyle: { color: '#1f2a44', width: 2, type: 'solid' },
      label: { formatter: `boundary ${loadText(max.value, axis)}`, position: 'end' },
    });
  if (b?.boundary_type === 'cliff' && max !== null && min !== null)
    marks.markArea = {
      silent: true,
      itemStyle: { color: 'rgba(217, 45, 32, 0.12)' },
      label: { position: 'insideTop', color: '#7a271a' },
      data: [
        [{ name: `cliff ${figure(max.value)}–${figure(min.value)}`, xAxis: max.value }, { xAxis: min.value }],
      ],
    };
  const fitted = b?.fitted_boundary ?? null;
  if (fitted !== null)
    lines.push({
      name: 'fitted boundary',
      xAxis: fitted,
      lineStyle: { color: '#1f2a44', width: 1, type: 'dotted' },
      label: { formatter: `fit ≈ ${figure(fitted)}`, position: 'insideEndTop' },
    });
  if (lines.length > 0) marks.markLine = { silent: true, symbol: 'none', data: lines };
  return marks;
}

/** The threshold as a dashed line across the load range (carrying the boundary's marks). */
function thresholdSeries(h: SearchHistory, sla: SearchSla): Series {
  const loads = h.iterations.map((i) => i.load);
  const left = Math.min(h.config.range.lo, ...loads);
  const right = Math.max(h.config.range.hi, ...loads);
  const label = `${sla.op} ${valueWithUnit(sla.threshold, sla.metric_tag)}`;
  return {
    name: `threshold (${opSign(sla.op)} ${valueWithUnit(sla.threshold, sla.metric_tag)})`,
    type: 'line',
    symbol: 'none',
    lineStyle: { color: '#b42318', width: 1.5, type: 'dashed' },
    itemStyle: { color: '#b42318' },
    endLabel: { show: true, formatter: label, color: '#b42318' },
    tooltip: { show: false },
    z: 2,
    data: [
      [left, sla.threshold],
      [right, sla.threshold],
    ],
    ...boundaryMarks(h),
  };
}

function chartId(sla: SearchSla, index: number): string {
  return `slo-${index + 1}-${sla.metric_tag}-${sla.stat}`.toLowerCase().replace(/[^a-z0-9-]+/g, '-');
}

function xAxisOf(h: SearchHistory, log: boolean): Record<string, unknown> {
  const name = `${loadAxisName(h.config.search_over)}${log ? ', log scale' : ''}`;
  return log ? valueAxis(name, { type: 'log', logBase: 10 }) : valueAxis(name);
}

/** The chart of the `index`-th SLO of the search. */
export function sloChart(h: SearchHistory, sla: SearchSla, index: number): ChartSpec {
  const log = logLoadAxis(h);
  const { points, missing } = plotted(h, sla, index);
  const series: Series[] = [
    thresholdSeries(h, sla),
    ...[intervalSeries(points), overloadedSeries(points)].filter((s): s is Series => s !== null),
    ...statusSeries(points),
  ];
  const { lo, hi } = h.config.range;
  const sub = subtitle(
    `${points.length} of ${h.iterations.length} probes`,
    missing > 0 ? `${missing} without a value` : '',
    log ? `log load axis: the range spans ${figure(hi / lo)}×` : '',
  );
  const unit = metricUnit(sla.metric_tag);
  const yName = `${metricName(sla.metric_tag)} ${sla.stat}${unit === '' ? '' : ` (${unit})`}`;
  const option: EChartsOption = {
    ...baseOption(`${slaText(sla)} against load`, sub),
    legend: { bottom: 0, type: 'scroll' },
    grid: { left: 80, right: 90, top: 70, bottom: 70, containLabel: true },
    xAxis: xAxisOf(h, log),
    yAxis: valueAxis(yName, { nameGap: 50 }),
    series: series as EChartsOption['series'],
  };
  const drawn = series.reduce((n, s) => n + s.data.length, 0);
  return { id: chartId(sla, index), title: `${slaText(sla)} against load`, option, points: drawn };
}

/** One chart per SLO of the search, in the order of `config.sla_filters`. */
export function buildSearchCharts(h: SearchHistory): ChartSpec[] {
  return h.config.sla_filters.map((sla, i) => sloChart(h, sla, i));
}
