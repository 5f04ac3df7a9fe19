/**
 * Statistics of every family and label set an endpoint served, over the benchmark window, as AIPerf's
 * `server_metrics_export.json` gives them (AIPerf docs, "Server Metrics JSON Export Schema"): a gauge
 * (or untyped family, AIPerf's `unknown`) by `avg, min, max, std, p1…p99` of the scrapes inside the
 * window; a counter by `total` (its increase, resets handled) and `rate` (total / window length); a
 * histogram by the increase of each bucket, `count` and `sum`, their rates, `avg` = sum / count and
 * `p…_estimate` percentiles interpolated linearly inside the buckets (Prometheus
 * `histogram_quantile`). Summaries are not exported.
 */
import { computeStats, PERCENTILES } from '../metrics/stats.js';
import { type Labels, labelKey } from './prometheus-text.js';
import type { FamilyInfo } from './scrape-protocol.js';
import type { ScrapeLine, SnapshotSeries } from './snapshot.js';
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

/** The type of an exported family (AIPerf calls untyped families `unknown`). */
export type ExportType = 'gauge' | 'counter' | 'histogram' | 'unknown';

/** One label set of one family at one endpoint, with its statistics (null: no scrape in the window). */
export interface ExportSeries {
  endpoint_url: string;
  labels?: Labels;
  stats: Record<string, number> | null;
  /** Histograms: the increase of each bucket (cumulative, by upper bound). */
  buckets?: Record<string, number>;
}

/** One family in the export. */
export interface ExportFamily {
  type: ExportType;
  description: string;
  unit?: string;
  series: ExportSeries[];
}

const round = (x: number): number => (Number.isFinite(x) ? Number.parseFloat(x.toPrecision(10)) : x);

/** The unit a family's name implies (Prometheus naming conventions), or undefined. */
export function unitOf(name: string): string | undefined {
  if (name.endsWith('_seconds')) return 'seconds';
  if (name.endsWith('_bytes')) return 'bytes';
  if (name.endsWith('_perc') || name.endsWith('_usage') || name.endsWith('_rate')) return 'ratio';
  if (name.includes('token')) return 'tokens';
  if (name.includes('request') || name.endsWith('_reqs') || name.includes('preemption')) return 'requests';
  return undefined;
}

/** A series of one family at one endpoint over the scrapes: labels and its value per scrape. */
interface Track {
  labels: Labels;
  points: Array<{ t: number; s: SnapshotSeries }>;
}

function tracksOf(name: string, lines: readonly ScrapeLine[], w: MetricsWindow): Track[] {
  const tracks = new Map<string, Track>();
  for (const line of lines) {
    const t = timeIn(w, line.timestamp_ns);
    for (const s of line.metrics[name] ?? []) {
      const key = labelKey(s.labels ?? {});
      let track = tracks.get(key);
      if (track === undefined) {
        track = { labels: s.labels ?? {}, points: [] };
        tracks.set(key, track);
      }
      track.points.push({ t, s });
    }
  }
  return [...tracks.values()];
}

const scalarPoints = (track: Track): Point[] =>
  track.points.flatMap(({ t, s }) => (typeof s.value === 'number' ? [{ t, v: s.value }] : []));

function gaugeStats(track: Track, w: MetricsWindow): Record<string, number> | null {
  const stats = computeStats(Float64Array.from(insideWindow(scalarPoints(track), w).map((p) => p.v)));
  if (stats === undefined) return null;
  const { count: _count, ...rest } = stats;
  return Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, round(v)]));
}

function counterStats(track: Track, w: MetricsWindow): Record<string, number> | null {
  const bracket = bracketWindow(scalarPoints(track), w);
  if (bracket.length < 2) return null;
  const run = counterRun(bracket);
  const seconds = windowSeconds(w);
  return { total: round(run.delta), rate: seconds > 0 ? round(run.delta / seconds) : 0, resets: run.resets };
}

/** Upper bounds as numbers (`+Inf` last). */
const bound = (le: string): number => (/^\+?inf$/i.test(le) ? Number.POSITIVE_INFINITY : Number(le));

/** The `q` quantile (0–1) of cumulative `buckets` (Prometheus `histogram_quantile`); null when empty. */
export function bucketQuantile(buckets: ReadonlyArray<[number, number]>, q: number): number | null {
  const total = buckets[buckets.length - 1]?.[1] ?? 0;
  if (total <= 0) return null;
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (const [le, cum] of buckets) {
    if (cum >= rank) {
      if (le === Number.POSITIVE_INFINITY) return prevBound;
      if (cum === prevCount) return le;
      return prevBound + ((le - prevBound) * (rank - prevCount)) / (cum - prevCount);
    }
    prevBound = le;
    prevCount = cum;
  }
  return prevBound;
}

/** The increase of a histogram field between the bracketing scrapes (per-step, resets handled). */
function histogramIncrease(
  points: ReadonlyArray<{ s: SnapshotSeries }>,
  pick: (s: SnapshotSeries) => number | null | undefined,
): number {
  let total = 0;
  for (let i = 1; i < points.length; i++) {
    const a = pick((points[i - 1] as { s: SnapshotSeries }).s);
    const b = pick((points[i] as { s: SnapshotSeries }).s);
    if (typeof a === 'number' && typeof b === 'number') total += increase(a, b);
  }
  return total;
}

function histogramStats(track: Track, w: MetricsWindow): Pick<ExportSeries, 'stats' | 'buckets'> {
  const points = bracketWindow(track.points, w);
  if (points.length < 2) return { stats: null };
  const les = Object.keys((points[points.length - 1] as { s: SnapshotSeries }).s.buckets ?? {});
  const cumulative = les
    .map((le): [string, number] => [le, histogramIncrease(points, (s) => s.buckets?.[le])])
    .sort((a, b) => bound(a[0]) - bound(b[0]));
  const count = histogramIncrease(points, (s) => s.count);
  const sum = histogramIncrease(points, (s) => s.sum);
  const seconds = windowSeconds(w);
  const stats: Record<string, number> = {
    count: round(count),
    count_rate: seconds > 0 ? round(count / seconds) : 0,
    sum: round(sum),
    sum_rate: seconds > 0 ? round(sum / seconds) : 0,
  };
  if (count > 0) stats.avg = round(sum / count);
  const numeric = cumulative.map(([le, n]): [number, number] => [bound(le), n]);
  for (const p of PERCENTILES) {
    const v = bucketQuantile(numeric, p / 100);
    if (v !== null) stats[`p${p}_estimate`] = round(v);
  }
  return { stats, buckets: Object.fromEntries(cumulative.map(([le, n]) => [le, round(n)])) };
}

function exportType(info: FamilyInfo | undefined, sample: SnapshotSeries | undefined): ExportType {
  if (info?.type === 'gauge' || info?.type === 'counter' || info?.type === 'histogram') return info.type;
  return sample?.buckets !== undefined ? 'histogram' : 'unknown';
}

/**
 * Every family of every endpoint over window `w`, grouped by family name (series tagged with their
 * endpoint), names sorted.
 */
export function familyStats(
  lines: ReadonlyMap<string, ScrapeLine[]>,
  families: Readonly<Record<string, FamilyInfo>>,
  w: MetricsWindow,
): Record<string, ExportFamily> {
  const out: Record<string, ExportFamily> = {};
  for (const [url, own] of lines) {
    const names = new Set(own.flatMap((l) => Object.keys(l.metrics)));
    for (const name of names) {
      const tracks = tracksOf(name, own, w);
      const type = exportType(families[name], tracks[0]?.points[0]?.s);
      const unit = unitOf(name);
      out[name] ??= {
        type,
        description: families[name]?.help ?? '',
        ...(unit === undefined ? {} : { unit }),
        series: [],
      };
      for (const track of tracks) {
        const labels = Object.keys(track.labels).length === 0 ? {} : { labels: track.labels };
        const stats =
          type === 'histogram'
            ? histogramStats(track, w)
            : { stats: type === 'counter' ? counterStats(track, w) : gaugeStats(track, w) };
        out[name].series.push({ endpoint_url: url, ...labels, ...stats });
      }
    }
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
