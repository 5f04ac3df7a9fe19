/**
 * GPU telemetry in a profile run (`--gpu-telemetry`): a second scraper thread of the server-metrics
 * kind (server-metrics/scraper.ts) on the DCGM exporters, started before the first phase, marked at
 * the profiling phase's start and stopped after it like the server-metrics one; after the run the
 * per-GPU exports and summary section (server-metrics/gpu-exports.ts) over the same window, and the
 * console line.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { RunPlan } from '../config/plan.js';
import type { ArtifactPaths } from '../export/console-table.js';
import type { RunTotals } from '../metrics/types.js';
import {
  GPU_TELEMETRY_CSV_FILE_NAME,
  GPU_TELEMETRY_JSON_FILE_NAME,
  GPU_TELEMETRY_JSONL_FILE_NAME,
  type GpuEndpointSection,
  type GpuTelemetrySection,
  writeGpuTelemetryExports,
} from '../server-metrics/gpu-exports.js';
import type { GpuStats } from '../server-metrics/gpu-stats.js';
import {
  type ScrapeReport,
  type ScraperThread,
  type ServerMetricsScraper,
  spawnServerMetrics,
} from '../server-metrics/scraper.js';
import { DEFAULT_DCGM_URLS, gpuTelemetryUrls } from '../server-metrics/targets.js';
import { packageVersion } from '../util/package-root.js';
import type { RunEnv } from '../util/run-env.js';
import { scrapeEndpointFor, windowOf } from './server-metrics-run.js';

/** Starts the DCGM scraper thread with `--gpu-telemetry`; null without it. */
export function spawnGpuScraper(config: RunPlan, env: RunEnv): ScraperThread | null {
  if (config.gpuTelemetry === false) return null;
  return spawnServerMetrics(env.log, {
    label: 'GPU telemetry',
    optOut: 'leave out --gpu-telemetry to skip it',
  });
}

/**
 * Starts scraping AIPerf's default DCGM URLs (quietly: one that does not answer is not warned about)
 * and the `--gpu-telemetry` URLs on `thread`; resolves after the first scrape of each. Never rejects.
 */
export async function beginGpuScraper(
  thread: ScraperThread | null,
  config: RunPlan,
  targets: readonly string[],
): Promise<ServerMetricsScraper | null> {
  if (thread === null) return null;
  const given = Array.isArray(config.gpuTelemetry) ? config.gpuTelemetry : [];
  const urls = gpuTelemetryUrls(given);
  return thread.begin({
    endpoints: urls.map((url) => ({
      ...scrapeEndpointFor(url, targets, config),
      ...(DEFAULT_DCGM_URLS.includes(url) && !given.includes(url) ? { optional: true } : {}),
    })),
    intervalMs: config.gpuTelemetryIntervalMs,
    file: join(config.artifactDir, GPU_TELEMETRY_JSONL_FILE_NAME),
  });
}

/**
 * Writes `gpu_telemetry_export.json`/`.csv` and returns the summary section; null without
 * `--gpu-telemetry`.
 * @throws the file system error of a failed read or write.
 */
export async function finishGpuTelemetry(
  config: RunPlan,
  report: ScrapeReport | null,
  totals: RunTotals,
): Promise<GpuTelemetrySection | null> {
  if (report === null) return null;
  const given = Array.isArray(config.gpuTelemetry) ? config.gpuTelemetry : [];
  const defaults = new Set(DEFAULT_DCGM_URLS.filter((u) => !given.includes(u)));
  return writeGpuTelemetryExports(
    config.artifactDir,
    report,
    windowOf(totals, report),
    packageVersion(),
    defaults,
  );
}

const fixed = (x: number | undefined, digits: number): string =>
  x === undefined ? 'N/A' : x.toFixed(digits);

/** One GPU in words: its index and name, utilisation, memory used, power and SM clock over the window. */
function gpuWords(g: GpuStats): string {
  const m = g.metrics;
  const facts: string[] = [];
  const util = m.nvidia_gpu_utilization;
  if (util !== undefined) facts.push(`utilization avg ${fixed(util.avg, 1)} %, max ${fixed(util.max, 1)} %`);
  const mem = m.nvidia_memory_used;
  if (mem !== undefined) facts.push(`memory used max ${fixed(mem.max, 2)} GB`);
  const power = m.nvidia_power_usage;
  if (power !== undefined) facts.push(`power avg ${fixed(power.avg, 1)} W`);
  const clock = m.nvidia_sm_clock;
  if (clock !== undefined) facts.push(`SM clock avg ${fixed(clock.avg, 0)} MHz`);
  const name = `GPU ${g.index ?? g.id}${g.name === null ? '' : ` (${g.name})`}`;
  return facts.length === 0 ? `${name}: none of the followed fields` : `${name}: ${facts.join(', ')}`;
}

function endpointWords(e: GpuEndpointSection): string {
  if (e.status === 'unavailable') return `${e.url} unavailable (${e.reason})`;
  if (e.gpus.length === 0 && e.failed_scrapes < e.scrapes)
    return `${e.url} answered ${e.scrapes} scrapes with no DCGM GPU series (no DCGM_FI_* field with a gpu or UUID label): is it a DCGM exporter? (a server's own /metrics goes to --server-metrics)`;
  const head = `${e.url}: ${e.gpus.length} GPU${e.gpus.length === 1 ? '' : 's'}, ${e.scrapes} scrapes`;
  const failed = e.failed_scrapes > 0 ? `, ${e.failed_scrapes} failed (${e.last_error})` : '';
  return [`${head}${failed}`, ...e.gpus.map(gpuWords)].join('; ');
}

/**
 * The console line: per exporter that answered (or was asked for), its GPUs over the window; a
 * default URL that did not answer is left out, and a run where none answered says so.
 */
export function gpuTelemetryLine(section: GpuTelemetrySection): string {
  const shown = section.endpoints.filter((e) => e.status === 'ok' || !e.default_url);
  if (shown.length === 0)
    return `GPU telemetry: no DCGM exporter answered (${section.endpoints.map((e) => `${e.url}: ${e.reason}`).join('; ')})`;
  return `GPU telemetry: ${shown.map(endpointWords).join(' | ')}`;
}

/** The GPU telemetry files the run wrote (none when no DCGM exporter answered). */
export function gpuTelemetryPaths(dir: string): ArtifactPaths {
  const path = (name: string): string | null => (existsSync(join(dir, name)) ? join(dir, name) : null);
  const json = path(GPU_TELEMETRY_JSON_FILE_NAME);
  const csv = path(GPU_TELEMETRY_CSV_FILE_NAME);
  const jsonl = path(GPU_TELEMETRY_JSONL_FILE_NAME);
  return {
    ...(json === null ? {} : { gpuTelemetryJson: json }),
    ...(csv === null ? {} : { gpuTelemetryCsv: csv }),
    ...(jsonl === null ? {} : { gpuTelemetryJsonl: jsonl }),
  };
}
