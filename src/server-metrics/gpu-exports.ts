/**
 * The GPU telemetry artifacts of a run (`--gpu-telemetry`, AIPerf's names):
 * `gpu_telemetry_export.jsonl`, every scrape of every DCGM exporter as it came (the server-metrics
 * scrape line, snapshot.ts, written by its own scraper thread while the run goes);
 * `gpu_telemetry_export.json`, per endpoint and GPU the statistics of each DCGM field over the
 * benchmark window (gpu-stats.ts) in AIPerf's layout; `gpu_telemetry_export.csv`, the same as one
 * table (AIPerf's columns, gpu-export-csv.ts). Written after the run from the JSONL file, with the summary's
 * `gpu_telemetry` section; nothing is written when no exporter answered.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { renderGpuTelemetryCsv } from './gpu-export-csv.js';
import { type GpuStats, gpuStats } from './gpu-stats.js';
import type { EndpointReport } from './scrape-protocol.js';
import type { ScrapeReport } from './scraper.js';
import { isoOf } from './section.js';
import { byEndpoint, type MetricsWindow, readScrapeLines, windowSeconds } from './window.js';

/** Every DCGM scrape, one JSON line each. */
export const GPU_TELEMETRY_JSONL_FILE_NAME = 'gpu_telemetry_export.jsonl';
/** Per-GPU statistics over the window. */
export const GPU_TELEMETRY_JSON_FILE_NAME = 'gpu_telemetry_export.json';
/** The same as one CSV table. */
export const GPU_TELEMETRY_CSV_FILE_NAME = 'gpu_telemetry_export.csv';

/** The three files, for the artifact folder's ownership rule. */
export const GPU_TELEMETRY_FILE_NAMES: readonly string[] = [
  GPU_TELEMETRY_JSONL_FILE_NAME,
  GPU_TELEMETRY_JSON_FILE_NAME,
  GPU_TELEMETRY_CSV_FILE_NAME,
];

/** One exporter in the summary's `gpu_telemetry` section. */
export interface GpuEndpointSection {
  url: string;
  /** `unavailable`: its first scrape failed (`reason`): not there, or not Prometheus text. */
  status: 'ok' | 'unavailable';
  reason: string | null;
  /** A default URL (`localhost:9400`, `:9401`) tried in case an exporter is there. */
  default_url: boolean;
  scrapes: number;
  failed_scrapes: number;
  last_error: string | null;
  gpus: GpuStats[];
}

/** The summary's `gpu_telemetry` section. */
export interface GpuTelemetrySection {
  interval_ms: number;
  window: { start_time: string; end_time: string; duration_s: number; basis: string };
  endpoints: GpuEndpointSection[];
  /** Why the scraper stopped early; absent when it did not. */
  scraper_failure?: string;
}

/** `host:port` of a URL, as AIPerf keys its endpoints. */
const display = (url: string): string => new URL(url).host;

function endpointSection(
  e: EndpointReport,
  gpus: GpuStats[],
  defaults: ReadonlySet<string>,
): GpuEndpointSection {
  return {
    url: e.url,
    status: e.status,
    reason: e.reason,
    default_url: defaults.has(e.url),
    scrapes: e.scrapes,
    failed_scrapes: e.failedScrapes,
    last_error: e.lastError,
    gpus,
  };
}

/** `gpu_telemetry_export.json`: AIPerf's `{summary, endpoints: {host:port: {gpus: {gpu_N: …}}}}`. */
function exportJson(section: GpuTelemetrySection, version: string): Record<string, unknown> {
  const endpoints: Record<string, unknown> = {};
  for (const e of section.endpoints) {
    if (e.status !== 'ok') continue;
    const gpus: Record<string, unknown> = {};
    for (const [i, g] of e.gpus.entries())
      gpus[`gpu_${g.index ?? i}`] = {
        gpu_index: g.index,
        gpu_name: g.name,
        gpu_uuid: g.uuid,
        platform: 'nvidia',
        hostname: g.hostname,
        metrics: g.metrics,
      };
    endpoints[display(e.url)] = { url: e.url, gpus };
  }
  return {
    schema_version: '1.0',
    tokenload_version: version,
    summary: {
      endpoints_configured: section.endpoints.map((e) => e.url),
      endpoints_successful: section.endpoints.filter((e) => e.status === 'ok').map((e) => e.url),
      start_time: section.window.start_time,
      end_time: section.window.end_time,
      duration_seconds: section.window.duration_s,
      window_basis: section.window.basis,
      interval_ms: section.interval_ms,
    },
    endpoints,
  };
}

/**
 * Reads the run's DCGM scrapes, writes `gpu_telemetry_export.json` and `.csv` into `dir`, and
 * returns the summary's `gpu_telemetry` section. Without a single scrape (no exporter answered),
 * writes nothing and removes the empty `gpu_telemetry_export.jsonl`; when the exporters answered
 * without a single GPU's series, no `.csv` (it would be a header alone).
 * @param defaults the URLs tried by default (reported as `default_url`).
 * @throws the file system error of a failed read or write; {Error} for a malformed JSONL line.
 */
export async function writeGpuTelemetryExports(
  dir: string,
  report: ScrapeReport,
  window: MetricsWindow,
  version: string,
  defaults: ReadonlySet<string>,
): Promise<GpuTelemetrySection> {
  const lines = byEndpoint(existsSync(report.file) ? await readScrapeLines(report.file) : []);
  const section: GpuTelemetrySection = {
    interval_ms: report.intervalMs,
    window: {
      start_time: isoOf(window.startNs),
      end_time: isoOf(window.endNs),
      duration_s: Number.parseFloat(windowSeconds(window).toPrecision(9)),
      basis: window.basis,
    },
    endpoints: report.endpoints.map((e) =>
      endpointSection(e, gpuStats(lines.get(e.url) ?? [], window), defaults),
    ),
    ...(report.failure === null ? {} : { scraper_failure: report.failure }),
  };
  if (lines.size === 0) {
    await rm(report.file, { force: true });
    return section;
  }
  await writeFile(
    join(dir, GPU_TELEMETRY_JSON_FILE_NAME),
    `${JSON.stringify(exportJson(section, version), null, 2)}\n`,
  );
  // A table of no GPU (exporters that answered without any DCGM series) would be its header alone.
  if (section.endpoints.some((e) => e.gpus.length > 0))
    await writeFile(join(dir, GPU_TELEMETRY_CSV_FILE_NAME), renderGpuTelemetryCsv(section.endpoints));
  return section;
}
