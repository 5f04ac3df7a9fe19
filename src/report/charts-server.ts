/**
 * The report's server-metrics charts and table, on the same time axis as every other time chart
 * (seconds since the first request started): requests running and waiting on the server beside the
 * client's requests in flight; KV-cache usage and prefix-cache hit rate; prompt and generation
 * tokens per second and preemptions. Each is left out when no endpoint served its series.
 */
import type { EChartsOption } from 'echarts';
import { binLayout, inFlightBins, runSpanS } from './bins.js';
import {
  baseOption,
  type ChartSpec,
  compact,
  roundS,
  subtitle,
  TIME_GROUP,
  timeAxis,
  timeAxisEndS,
  valueAxis,
} from './chart-base.js';
import { htmlTable } from './html-sections.js';
import { escapeHtml } from './html-text.js';
import type { EndpointSeries, RunData, ServerRunData, TimePoints } from './types.js';

/** The id of every server-metrics chart (`plots/<id>.png`), in report order. */
export const SERVER_CHART_IDS = [
  'server-requests-over-time',
  'server-kv-cache-over-time',
  'server-tokens-over-time',
  'server-preemptions-over-time',
] as const;

/** One line of a chart over time. */
export interface Line {
  name: string;
  data: TimePoints;
  dashed?: boolean;
  /** Drawn against the right-hand axis (a series of another scale). */
  right?: boolean;
}

/** The endpoint's name in a legend: nothing for a single endpoint, else its host and path. */
function suffix(server: ServerRunData, e: EndpointSeries): string {
  if (server.endpoints.length < 2) return '';
  const url = new URL(e.url);
  return ` (${url.host}${url.pathname})`;
}

/** Points from the first request on, rounded for the page, values times `scale`. */
export const shown = (points: TimePoints, scale = 1): TimePoints =>
  points.filter(([t]) => t >= 0).map(([t, v]) => [roundS(t), compact(v * scale)]);

/**
 * A line chart of `lines` on the shared time axis (0 to `endS`, in {@link TIME_GROUP}); `rightName`
 * names a right-hand axis some lines use.
 */
export function lineChart(
  endS: number,
  id: string,
  title: string,
  sub: string,
  yName: string,
  lines: readonly Line[],
  rightName?: string,
): ChartSpec | null {
  const drawn = lines.filter((l) => l.data.length > 0);
  if (drawn.length === 0) return null;
  const left = valueAxis(yName, { min: 0, scale: false, nameGap: 72 });
  const right = valueAxis(rightName ?? '', { min: 0, scale: false, nameGap: 62, position: 'right' });
  const twoAxes = rightName !== undefined && drawn.some((l) => l.right === true);
  const option: EChartsOption = {
    ...baseOption(title, sub),
    tooltip: { trigger: 'axis' },
    legend: { top: 55, itemGap: 24 },
    grid: { left: 80, right: twoAxes ? 90 : 40, top: 95, bottom: 55, containLabel: true },
    xAxis: timeAxis(endS),
    yAxis: twoAxes ? [left, right] : left,
    dataZoom: [{ type: 'inside' }],
    series: drawn.map((l) => ({
      type: 'line' as const,
      name: l.name,
      showSymbol: l.data.length < 60,
      data: l.data,
      ...(twoAxes && l.right === true ? { yAxisIndex: 1 } : {}),
      ...(l.dashed === true ? { lineStyle: { type: 'dashed' as const } } : {}),
    })),
  };
  return { id, title, option, points: drawn.reduce((n, l) => n + l.data.length, 0), group: TIME_GROUP };
}

/** The client's requests in flight per 1 s bin (time-weighted), at bin centres. */
function clientInFlight(run: RunData): TimePoints {
  const all = run.timeline ?? run.requests;
  if ((run.timeline?.count ?? run.requests.length) === 0) return [];
  const layout = binLayout(runSpanS(all));
  return inFlightBins(all, layout).map((v, i): [number, number] => [
    roundS((i + 0.5) * layout.widthS),
    compact(v),
  ]);
}

function requestsChart(endS: number, run: RunData, server: ServerRunData): ChartSpec | null {
  const lines: Line[] = server.endpoints.flatMap((e) => [
    { name: `running on the server${suffix(server, e)}`, data: shown(e.gauges.running_requests ?? []) },
    { name: `waiting on the server${suffix(server, e)}`, data: shown(e.gauges.waiting_requests ?? []) },
  ]);
  if (lines.every((l) => l.data.length === 0)) return null;
  lines.push({ name: 'in flight at the client', data: clientInFlight(run), dashed: true });
  const sub = subtitle('server: as scraped from /metrics', 'client: time-weighted mean per 1 s bin');
  return lineChart(
    endS,
    'server-requests-over-time',
    'Server: requests running and waiting',
    sub,
    'requests',
    lines,
  );
}

function cacheChart(endS: number, server: ServerRunData): ChartSpec | null {
  const lines: Line[] = server.endpoints.flatMap((e) => [
    { name: `KV-cache usage${suffix(server, e)}`, data: shown(e.gauges.kv_cache_usage ?? [], 100) },
    { name: `prefix-cache hit rate${suffix(server, e)}`, data: shown(e.hitRate, 100) },
    {
      name: `server's own hit-rate gauge${suffix(server, e)}`,
      data: shown(e.gauges.server_cache_hit_rate ?? [], 100),
    },
  ]);
  const sub = subtitle('usage as scraped', 'hit rate: hits / queries between two scrapes');
  return lineChart(
    endS,
    'server-kv-cache-over-time',
    'Server: KV-cache usage and prefix-cache hit rate',
    sub,
    '%',
    lines,
  );
}

function tokensChart(endS: number, server: ServerRunData): ChartSpec | null {
  const lines: Line[] = server.endpoints.flatMap((e) => [
    { name: `prompt tokens/s${suffix(server, e)}`, data: shown(e.rates.prompt_tokens ?? []) },
    {
      name: `generation tokens/s (right)${suffix(server, e)}`,
      data: shown(e.rates.generation_tokens ?? []),
      right: true,
    },
  ]);
  const sub = 'counter increase between two scrapes / their interval';
  const title = 'Server: tokens per second';
  return lineChart(
    endS,
    'server-tokens-over-time',
    title,
    sub,
    'prompt tokens/s',
    lines,
    'generation tokens/s',
  );
}

function preemptionsChart(endS: number, server: ServerRunData): ChartSpec | null {
  const lines: Line[] = server.endpoints.map((e) => ({
    name: `preemptions/s${suffix(server, e)}`,
    data: shown(e.rates.preemptions ?? []),
  }));
  if (lines.every((l) => l.data.every(([, v]) => v === 0))) return null;
  const sub = 'counter increase between two scrapes / their interval';
  return lineChart(
    endS,
    'server-preemptions-over-time',
    'Server: preemptions per second',
    sub,
    'preemptions/s',
    lines,
  );
}

/** The server-metrics charts of `run`; none when it has no server metrics. */
export function serverCharts(run: RunData): ChartSpec[] {
  const server = run.server;
  if (server === null || server === undefined) return [];
  const endS = timeAxisEndS(run.timeline ?? run.requests);
  const charts = [
    requestsChart(endS, run, server),
    cacheChart(endS, server),
    tokensChart(endS, server),
    preemptionsChart(endS, server),
  ];
  return charts.filter((c): c is ChartSpec => c !== null);
}

const fmt = (v: number | null | undefined, scale = 1): string =>
  typeof v === 'number' ? compact(v * scale).toLocaleString('en-US') : 'N/A';
const exact = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: 6 });

/** The summary's server metrics as a table per endpoint; nothing without them. */
export function serverSection(run: RunData): string {
  const section = run.server?.section;
  if (section === null || section === undefined) return '';
  const parts = section.endpoints.map((e) => {
    const head = `<h3>${escapeHtml(e.url)}</h3>`;
    if (e.status === 'unavailable')
      return `${head}<p class="muted">unavailable: ${escapeHtml(e.reason ?? '')}</p>`;
    const rows = Object.entries(e.metrics).map(([key, m]) => {
      const scale = m.unit === 'ratio' ? 100 : 1;
      const unit = m.unit === 'ratio' ? '%' : m.unit;
      if (m.kind === 'gauge')
        return [key, unit, fmt(m.min, scale), fmt(m.avg, scale), fmt(m.max, scale), '', ''];
      if (m.kind === 'ratio')
        return [key, unit, fmt(m.min, scale), fmt(m.value, scale), fmt(m.max, scale), '', ''];
      return [
        key,
        `${unit}/s`,
        fmt(m.rate_min),
        fmt(m.rate_avg),
        fmt(m.rate_max),
        exact(m.delta),
        String(m.resets),
      ];
    });
    const table = htmlTable(['series', 'unit', 'min', 'avg', 'max', 'increase', 'resets'], rows, 2);
    const missing =
      e.missing.length === 0 ? '' : `<p class="muted">not served: ${escapeHtml(e.missing.join(', '))}</p>`;
    return `${head}${table}${missing}`;
  });
  const w = section.window;
  const note = `<p class="muted">Over ${escapeHtml(w.basis)} (${w.duration_s.toFixed(3)} s), scraped every ${section.interval_ms} ms; counters as rates per second, their increase over the window and the resets seen.</p>`;
  return `<section id="server-metrics"><h2>Server metrics</h2>${note}${parts.join('\n')}</section>`;
}
