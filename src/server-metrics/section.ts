/**
 * The summary's `server_metrics` section: per scraped endpoint, the followed series
 * (known-series.ts) over the benchmark window (window.ts): a gauge's `min`/`avg`/`max` over the
 * scrapes inside it; a counter's `delta`, its average rate (`rate_avg` = delta / window length) and
 * the lowest and highest rate between two scrapes; the prefix-cache hit rate from the counters'
 * deltas (hits / queries; SGLang, which has no queries counter: cached tokens / prompt tokens).
 */
import { counterTotals, KNOWN_SERIES, type KnownSeries, knownValue, serverKind } from './known-series.js';
import type { ScrapeReport } from './scraper.js';
import type { ScrapeLine } from './snapshot.js';
import {
  bracketWindow,
  counterRun,
  increase,
  insideWindow,
  type MetricsWindow,
  type Point,
  timeIn,
  windowSeconds,
} from './window.js';

/** A gauge over the window; min/avg/max are null when no scrape fell inside it. */
export interface GaugeEntry {
  kind: 'gauge';
  unit: string;
  /** The family it was read from, e.g. `vllm:kv_cache_usage_perc`. */
  source: string;
  samples: number;
  min: number | null;
  avg: number | null;
  max: number | null;
}

/** A counter over the window: increase, rates per second, resets seen. */
export interface CounterEntry {
  kind: 'counter';
  unit: string;
  source: string;
  /** Scrapes used (the bracketing ones included). */
  samples: number;
  delta: number;
  rate_avg: number | null;
  rate_min: number | null;
  rate_max: number | null;
  resets: number;
}

/** The prefix-cache hit rate from counter deltas, with its lowest and highest between two scrapes. */
export interface HitRateEntry {
  kind: 'ratio';
  unit: 'ratio';
  value: number | null;
  min: number | null;
  max: number | null;
  hits_source: string;
  queries_source: string;
}

/** One endpoint's part of the section. */
export interface EndpointSection {
  url: string;
  /** `unavailable`: its first scrape failed (`reason`), it has no metrics. */
  status: 'ok' | 'unavailable';
  reason: string | null;
  /** `vllm` or `sglang` by its metric names; null for another server. */
  server: 'vllm' | 'sglang' | null;
  scrapes: number;
  failed_scrapes: number;
  last_error: string | null;
  /** Request sent → body read of its scrapes, ms; null without any. */
  scrape_latency_ms: { avg: number; max: number } | null;
  metrics: Record<string, GaugeEntry | CounterEntry | HitRateEntry>;
  /** Followed series this endpoint never served a number for (absent, or only `NaN`). */
  missing: string[];
}

/** The `server_metrics` section. */
export interface ServerMetricsSection {
  interval_ms: number;
  window: { start_time: string; end_time: string; duration_s: number; basis: string };
  endpoints: EndpointSection[];
  /** Why the scraper stopped early; absent when it did not. */
  scraper_failure?: string;
}

const round = (x: number, digits = 6): number => Number.parseFloat(x.toPrecision(digits));
const roundOrNull = (x: number | undefined): number | null => (x === undefined ? null : round(x));

/** A followed series' points in time order, and the family it came from (the last one seen). */
function pointsOf(
  series: KnownSeries,
  lines: readonly ScrapeLine[],
  w: MetricsWindow,
): { points: Point[]; source: string } | null {
  const points: Point[] = [];
  let source: string | null = null;
  for (const line of lines) {
    const v = knownValue(series, line.metrics);
    if (v === null || !Number.isFinite(v.value)) continue;
    points.push({ t: timeIn(w, line.timestamp_ns), v: v.value });
    source = v.source;
  }
  return source === null ? null : { points, source };
}

/** A counter point: its running total (label sets summed by their increases) and resets so far. */
interface CounterPoint extends Point {
  resets: number;
}

/** A followed counter's running total per scrape, in time order ({@link counterTotals}). */
function counterPointsOf(
  series: KnownSeries,
  lines: readonly ScrapeLine[],
  w: MetricsWindow,
): { points: CounterPoint[]; source: string } | null {
  const run = counterTotals(series, lines);
  if (run === null) return null;
  const points = lines.flatMap((line, i): CounterPoint[] => {
    const v = run.totals[i];
    return typeof v === 'number' ? [{ t: timeIn(w, line.timestamp_ns), v, resets: run.resets[i] ?? 0 }] : [];
  });
  return { points, source: run.source };
}

function gaugeEntry(series: KnownSeries, points: Point[], source: string, w: MetricsWindow): GaugeEntry {
  const values = insideWindow(points, w).map((p) => p.v);
  const avg = values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length;
  return {
    kind: 'gauge',
    unit: series.unit,
    source,
    samples: values.length,
    min: values.length === 0 ? null : round(Math.min(...values)),
    avg: avg === null ? null : round(avg),
    max: values.length === 0 ? null : round(Math.max(...values)),
  };
}

function counterEntry(
  series: KnownSeries,
  points: CounterPoint[],
  source: string,
  w: MetricsWindow,
): CounterEntry {
  const bracket = bracketWindow(points, w);
  const run = counterRun(bracket);
  const first = bracket[0];
  const last = bracket[bracket.length - 1];
  const seconds = windowSeconds(w);
  return {
    kind: 'counter',
    unit: series.unit,
    source,
    samples: bracket.length,
    delta: round(run.delta, 12),
    rate_avg: bracket.length < 2 || seconds <= 0 ? null : round(run.delta / seconds),
    rate_min: run.rates.length === 0 ? null : round(Math.min(...run.rates)),
    rate_max: run.rates.length === 0 ? null : round(Math.max(...run.rates)),
    resets: first === undefined || last === undefined ? 0 : last.resets - first.resets,
  };
}

/** Hits and queries per scrape interval, matched by time; the ratio of the sums and per interval. */
function hitRate(
  hits: { points: Point[]; source: string },
  queries: { points: Point[]; source: string },
  w: MetricsWindow,
): HitRateEntry {
  const h = bracketWindow(hits.points, w);
  const q = new Map(bracketWindow(queries.points, w).map((p) => [p.t, p.v]));
  let hitSum = 0;
  let querySum = 0;
  const ratios: number[] = [];
  for (let i = 1; i < h.length; i++) {
    const a = h[i - 1] as Point;
    const b = h[i] as Point;
    const qa = q.get(a.t);
    const qb = q.get(b.t);
    if (qa === undefined || qb === undefined) continue;
    const dh = increase(a.v, b.v);
    const dq = increase(qa, qb);
    hitSum += dh;
    querySum += dq;
    if (dq > 0) ratios.push(dh / dq);
  }
  return {
    kind: 'ratio',
    unit: 'ratio',
    value: querySum > 0 ? round(hitSum / querySum) : null,
    min: roundOrNull(ratios.length === 0 ? undefined : Math.min(...ratios)),
    max: roundOrNull(ratios.length === 0 ? undefined : Math.max(...ratios)),
    hits_source: hits.source,
    queries_source: queries.source,
  };
}

const seriesByKey = (key: string): KnownSeries => KNOWN_SERIES.find((s) => s.key === key) as KnownSeries;

/** The hit rate of an endpoint, when it serves hits and queries (or SGLang's cached and prompt tokens). */
function hitRateOf(lines: readonly ScrapeLine[], w: MetricsWindow): HitRateEntry | null {
  const hits = counterPointsOf(seriesByKey('prefix_cache_hits'), lines, w);
  if (hits === null) return null;
  const queries =
    counterPointsOf(seriesByKey('prefix_cache_queries'), lines, w) ??
    (hits.source.startsWith('sglang:') ? counterPointsOf(seriesByKey('prompt_tokens'), lines, w) : null);
  return queries === null ? null : hitRate(hits, queries, w);
}

function gaugeOf(series: KnownSeries, lines: readonly ScrapeLine[], w: MetricsWindow): GaugeEntry | null {
  const found = pointsOf(series, lines, w);
  return found === null ? null : gaugeEntry(series, found.points, found.source, w);
}

function counterOf(series: KnownSeries, lines: readonly ScrapeLine[], w: MetricsWindow): CounterEntry | null {
  const found = counterPointsOf(series, lines, w);
  return found === null ? null : counterEntry(series, found.points, found.source, w);
}

function endpointMetrics(
  lines: readonly ScrapeLine[],
  w: MetricsWindow,
): Pick<EndpointSection, 'metrics' | 'missing'> {
  const metrics: EndpointSection['metrics'] = {};
  const missing: string[] = [];
  for (const series of KNOWN_SERIES) {
    const entry = series.kind === 'gauge' ? gaugeOf(series, lines, w) : counterOf(series, lines, w);
    if (entry === null) missing.push(series.key);
    else metrics[series.key] = entry;
  }
  const rate = hitRateOf(lines, w);
  if (rate !== null) metrics.prefix_cache_hit_rate = rate;
  return { metrics, missing };
}

/** The section of a run's scrapes over window `w`. */
export function serverMetricsSection(
  report: ScrapeReport,
  lines: ReadonlyMap<string, ScrapeLine[]>,
  w: MetricsWindow,
): ServerMetricsSection {
  const endpoints = report.endpoints.map((e): EndpointSection => {
    const own = lines.get(e.url) ?? [];
    const last = own[own.length - 1];
    return {
      url: e.url,
      status: e.status,
      reason: e.reason,
      server: last === undefined ? null : serverKind(last.metrics),
      scrapes: e.scrapes,
      failed_scrapes: e.failedScrapes,
      last_error: e.lastError,
      scrape_latency_ms:
        e.scrapes === 0 ? null : { avg: round(e.latencyMsSum / e.scrapes, 4), max: round(e.latencyMsMax, 4) },
      ...(e.status === 'ok' ? endpointMetrics(own, w) : { metrics: {}, missing: [] }),
    };
  });
  return {
    interval_ms: report.intervalMs,
    window: {
      start_time: isoOf(w.startNs),
      end_time: isoOf(w.endNs),
      duration_s: round(windowSeconds(w), 9),
      basis: w.basis,
    },
    endpoints,
    ...(report.failure === null ? {} : { scraper_failure: report.failure }),
  };
}

/** Epoch ns as an ISO 8601 time (ms precision). */
export function isoOf(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString();
}
