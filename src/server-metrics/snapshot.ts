/**
 * One scrape of one `/metrics` endpoint as `server_metrics_export.jsonl` stores it, one line each
 * (AIPerf's layout): `{endpoint_url, timestamp_ns, endpoint_latency_ns, metrics, request_sent_ns,
 * first_byte_ns}`, where `metrics` maps each family name (counters without `_total`) to its series:
 * `{"value": v}` or `{"labels": {…}, "value": v}` for counters, gauges and untyped families, and
 * `{"labels"?, "buckets": {le: cumulative count}, "sum", "count"}` for histograms. Timestamps are
 * wall-clock epoch ns on the same clock as the records' `request_start_ns`; a value that is not a
 * finite number (`NaN`, `±Inf`) is written as null.
 */
import type { HistogramSeries, Labels, MetricFamily } from './prometheus-text.js';

/** One series of a scrape line's `metrics`. */
export interface SnapshotSeries {
  labels?: Labels;
  value?: number | null;
  buckets?: Record<string, number | null>;
  sum?: number | null;
  count?: number | null;
}

/** A scrape line's `metrics`: family name → series. */
export type SnapshotMetrics = Record<string, SnapshotSeries[]>;

/** One line of `server_metrics_export.jsonl`. Epoch ns are bigint (exact in JSON). */
export interface ScrapeLine {
  endpoint_url: string;
  /** When the answer's headers arrived (AIPerf stamps a scrape with its first byte), epoch ns. */
  timestamp_ns: bigint;
  /** Request sent → body read, ns. */
  endpoint_latency_ns: number;
  metrics: SnapshotMetrics;
  /** When the GET was sent, epoch ns. */
  request_sent_ns: bigint;
  /** When the answer's headers arrived, epoch ns. */
  first_byte_ns: bigint;
}

const finite = (v: number | null): number | null => (v !== null && Number.isFinite(v) ? v : null);

function histogramOf(s: HistogramSeries): SnapshotSeries {
  const buckets: Record<string, number | null> = {};
  for (const [le, n] of Object.entries(s.buckets)) buckets[le] = finite(n);
  return { buckets, sum: finite(s.sum), count: finite(s.count) };
}

/** The `metrics` object of a scrape line from the parsed families. */
export function snapshotMetrics(families: ReadonlyMap<string, MetricFamily>): SnapshotMetrics {
  const out: SnapshotMetrics = {};
  for (const f of families.values()) {
    out[f.name] = f.series.map((s) => {
      const body: SnapshotSeries =
        'buckets' in s ? histogramOf(s) : { value: finite((s as { value: number }).value) };
      return Object.keys(s.labels).length === 0 ? body : { labels: s.labels, ...body };
    });
  }
  return out;
}

/** The text of one JSONL line (epoch ns as exact integers), newline-terminated. */
export function formatScrapeLine(line: ScrapeLine): string {
  return `${JSON.stringify({
    endpoint_url: line.endpoint_url,
    timestamp_ns: '@T',
    endpoint_latency_ns: line.endpoint_latency_ns,
    metrics: line.metrics,
    request_sent_ns: '@S',
    first_byte_ns: '@F',
  })
    .replace('"@T"', line.timestamp_ns.toString())
    .replace('"@S"', line.request_sent_ns.toString())
    .replace('"@F"', line.first_byte_ns.toString())}\n`;
}

/** A scrape line read back: epoch ns as bigint. */
export function parseScrapeLine(text: string): ScrapeLine {
  // Epoch ns exceed 2^53: read them as text before JSON.parse rounds them.
  const exact = text.replace(/"(timestamp_ns|request_sent_ns|first_byte_ns)":(\d+)/g, '"$1":"$2"');
  const raw = JSON.parse(exact) as Record<string, unknown>;
  const ns = (key: string): bigint => {
    const v = raw[key];
    if (typeof v !== 'string') throw new Error(`${key} missing`);
    return BigInt(v);
  };
  if (typeof raw.endpoint_url !== 'string') throw new Error('endpoint_url missing');
  if (raw.metrics === null || typeof raw.metrics !== 'object') throw new Error('metrics missing');
  return {
    endpoint_url: raw.endpoint_url,
    timestamp_ns: ns('timestamp_ns'),
    endpoint_latency_ns: Number(raw.endpoint_latency_ns),
    metrics: raw.metrics as SnapshotMetrics,
    request_sent_ns: ns('request_sent_ns'),
    first_byte_ns: ns('first_byte_ns'),
  };
}
