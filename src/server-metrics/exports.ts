/**
 * The server-metrics artifacts of a run (AIPerf's names): `server_metrics_export.jsonl`, every
 * scrape as it came (written by the scraper while the run goes); `server_metrics_export.json`, every
 * family's statistics over the benchmark window (family-stats.ts); `server_metrics_export.csv`, the
 * same as a table (export-csv.ts). They are written after the run, from the JSONL file, together
 * with the summary's `server_metrics` section (section.ts).
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderServerMetricsCsv } from './export-csv.js';
import { familyStats } from './family-stats.js';
import type { ScrapeReport } from './scraper.js';
import { isoOf, type ServerMetricsSection, serverMetricsSection } from './section.js';
import type { ScrapeLine } from './snapshot.js';
import { byEndpoint, type MetricsWindow, readScrapeLines, windowSeconds } from './window.js';

/** Every scrape, one JSON line each (snapshot.ts). */
export const SERVER_METRICS_JSONL_FILE_NAME = 'server_metrics_export.jsonl';
/** Statistics of every family over the window. */
export const SERVER_METRICS_JSON_FILE_NAME = 'server_metrics_export.json';
/** The same as CSV sections. */
export const SERVER_METRICS_CSV_FILE_NAME = 'server_metrics_export.csv';
/** What each endpoint exposed: every family's type, help, and bucket bounds (AIPerf's metadata file). */
export const SERVER_METRICS_METADATA_FILE_NAME = 'server_metrics_metadata.json';

/** The three files, for the artifact folder's ownership rule. */
export const SERVER_METRICS_FILE_NAMES: readonly string[] = [
  SERVER_METRICS_JSONL_FILE_NAME,
  SERVER_METRICS_JSON_FILE_NAME,
  SERVER_METRICS_CSV_FILE_NAME,
  SERVER_METRICS_METADATA_FILE_NAME,
];

/** `summary.endpoint_info` of the JSON file, per endpoint URL. */
function endpointInfo(report: ScrapeReport): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    report.endpoints.map((e) => [
      e.url,
      {
        status: e.status,
        reason: e.reason,
        total_fetches: e.scrapes,
        failed_fetches: e.failedScrapes,
        avg_fetch_latency_ms: e.scrapes === 0 ? null : e.latencyMsSum / e.scrapes,
        max_fetch_latency_ms: e.scrapes === 0 ? null : e.latencyMsMax,
      },
    ]),
  );
}

/**
 * Reads the run's scrapes, writes `server_metrics_export.json` and `.csv` into `dir` (those of them
 * `formats` names: `--server-metrics-formats`), and returns the summary's
 * `server_metrics` section. Without a single scrape (no endpoint answered), writes nothing and
 * removes the empty `server_metrics_export.jsonl`.
 * @throws the file system error of a failed read or write; {Error} for a malformed JSONL line.
 */
export async function writeServerMetricsExports(
  dir: string,
  report: ScrapeReport,
  window: MetricsWindow,
  version: string,
  formats: ReadonlySet<string>,
): Promise<ServerMetricsSection> {
  // No file: the scraper thread failed before it began (it was warned about then).
  const lines = byEndpoint(existsSync(report.file) ? await readScrapeLines(report.file) : []);
  if (lines.size === 0) {
    // No endpoint answered (a 404, no server): no file is written, and the empty JSONL goes.
    await rm(report.file, { force: true });
    return serverMetricsSection(report, lines, window);
  }
  const families = familyStats(lines, report.families, window);
  const json = {
    schema_version: '1.0',
    tokenload_version: version,
    summary: {
      endpoints_configured: report.endpoints.map((e) => e.url),
      endpoints_successful: report.endpoints.filter((e) => e.status === 'ok').map((e) => e.url),
      start_time: isoOf(window.startNs),
      end_time: isoOf(window.endNs),
      duration_seconds: windowSeconds(window),
      window_basis: window.basis,
      interval_ms: report.intervalMs,
      endpoint_info: endpointInfo(report),
    },
    metrics: families,
  };
  if (formats.has('json'))
    await writeFile(join(dir, SERVER_METRICS_JSON_FILE_NAME), `${JSON.stringify(json, null, 2)}\n`);
  if (formats.has('csv'))
    await writeFile(join(dir, SERVER_METRICS_CSV_FILE_NAME), renderServerMetricsCsv(families, version));
  const metadata = serverMetricsMetadata(lines, report);
  await writeFile(join(dir, SERVER_METRICS_METADATA_FILE_NAME), `${JSON.stringify(metadata, null, 2)}\n`);
  return serverMetricsSection(report, lines, window);
}

/** One family in `server_metrics_metadata.json` (AIPerf's `metric_schemas` entry). */
interface MetricSchema {
  type: string;
  help: string;
  /** A histogram's bucket upper bounds (`le`) as the server wrote them, `+Inf` last; null otherwise. */
  bucket_labels: string[] | null;
  /** A summary's quantiles; tokenload keeps no summary series (their quantiles), so always null. */
  quantile_labels: null;
}

/**
 * `server_metrics_metadata.json` in AIPerf's shape: `{endpoints: {url: {endpoint_url,
 * endpoint_display, metric_schemas: {family: {type, help, bucket_labels, quantile_labels}}}}}`, one
 * entry per endpoint configured, each with the families its scrapes held (names as the JSONL file
 * keys them: counters without `_total`).
 */
export function serverMetricsMetadata(
  lines: ReadonlyMap<string, readonly ScrapeLine[]>,
  report: ScrapeReport,
): { endpoints: Record<string, Record<string, unknown>> } {
  const endpoints: Record<string, Record<string, unknown>> = {};
  for (const endpoint of report.endpoints) {
    const schemas: Record<string, MetricSchema> = {};
    for (const line of lines.get(endpoint.url) ?? []) {
      for (const [name, series] of Object.entries(line.metrics)) {
        if (schemas[name] !== undefined) continue;
        const info = report.families[name];
        const buckets = series.find((s) => s.buckets !== undefined)?.buckets;
        schemas[name] = {
          type: info?.type ?? (buckets === undefined ? 'untyped' : 'histogram'),
          help: info?.help ?? '',
          bucket_labels: buckets === undefined ? null : bucketOrder(Object.keys(buckets)),
          quantile_labels: null,
        };
      }
    }
    endpoints[endpoint.url] = {
      endpoint_url: endpoint.url,
      endpoint_display: endpoint.url,
      metric_schemas: schemas,
    };
  }
  return { endpoints };
}

/** Bucket bounds in increasing order, `+Inf` last (an object's integer-like keys come out first). */
function bucketOrder(les: string[]): string[] {
  const value = (le: string): number => (le === '+Inf' ? Number.POSITIVE_INFINITY : Number(le));
  return [...les].sort((a, b) => value(a) - value(b));
}
