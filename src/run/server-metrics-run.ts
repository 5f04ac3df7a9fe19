/**
 * Server metrics in a profile run: which `/metrics` URLs to scrape and with which headers, the
 * scraper started before the first phase, the benchmark window the summary covers, and the console
 * line. The scraping itself is `server-metrics/`.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_SERVER_METRICS_FORMATS } from '../config/fields-server.js';
import type { RunPlan } from '../config/plan.js';
import type { RunTotals } from '../metrics/types.js';
import { SERVER_METRICS_JSONL_FILE_NAME, writeServerMetricsExports } from '../server-metrics/exports.js';
import type { ScrapeEndpoint } from '../server-metrics/scrape-protocol.js';
import {
  type ScrapeReport,
  type ScraperThread,
  type ServerMetricsScraper,
  spawnServerMetrics,
} from '../server-metrics/scraper.js';
import type { ServerMetricsSection } from '../server-metrics/section.js';
import { metricsUrls } from '../server-metrics/targets.js';
import type { MetricsWindow } from '../server-metrics/window.js';
import { TimeBase } from '../timing/clock.js';
import { packageVersion } from '../util/package-root.js';
import type { RunEnv } from '../util/run-env.js';

/**
 * One scrape endpoint: the run's own headers (`-H`, `--api-key`) only for a URL on one of the
 * servers' origins, so credentials never go to another host, and what it carries of them (for the
 * reason of a 401 or 403).
 */
export function scrapeEndpointFor(url: string, targets: readonly string[], config: RunPlan): ScrapeEndpoint {
  const origin = new URL(url).origin;
  if (!targets.some((t) => new URL(t).origin === origin))
    return { url, headers: {}, credentials: 'other_host' };
  const headers = {
    ...config.headers,
    ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
  };
  return { url, headers, credentials: Object.keys(headers).length > 0 ? 'sent' : 'none_given' };
}

/**
 * Starts the scraper thread when `--server-metrics` is on (the default), before the target is known;
 * null with `--no-server-metrics`.
 */
export function spawnRunScraper(config: RunPlan, env: RunEnv): ScraperThread | null {
  return config.serverMetrics === false ? null : spawnServerMetrics(env.log);
}

/**
 * Starts scraping every server's `/metrics` (`targets`, `--url` order) and the `--server-metrics`
 * URLs on `thread`; resolves after the first scrape of each. Never rejects.
 */
export async function beginRunScraper(
  thread: ScraperThread | null,
  config: RunPlan,
  targets: readonly string[],
): Promise<ServerMetricsScraper | null> {
  if (thread === null) return null;
  const extra = config.serverMetrics === true || config.serverMetrics === false ? [] : config.serverMetrics;
  const urls = metricsUrls(targets, extra);
  return thread.begin({
    endpoints: urls.map((url) => scrapeEndpointFor(url, targets, config)),
    intervalMs: config.serverMetricsIntervalMs,
    file: join(config.artifactDir, SERVER_METRICS_JSONL_FILE_NAME),
  });
}

/**
 * The window the summary covers: first send to last response of the successful requests (the
 * records' benchmark window); without one, the profiling phase as the scraper saw it.
 */
export function windowOf(totals: RunTotals, report: ScrapeReport): MetricsWindow {
  if (totals.minStartNs !== null && totals.maxResponseNs !== null) {
    const time = new TimeBase();
    return {
      startNs: time.toEpochNs(totals.minStartNs),
      endNs: time.toEpochNs(totals.maxResponseNs),
      basis: 'first send to last response',
    };
  }
  return {
    startNs: report.markNs ?? report.stopNs,
    endNs: report.stopNs,
    basis: 'the profiling phase (no request succeeded)',
  };
}

/**
 * Writes `server_metrics_export.json`/`.csv` and returns the summary section; null without scraping.
 * @throws the file system error of a failed read or write.
 */
export async function finishServerMetrics(
  config: RunPlan,
  report: ScrapeReport | null,
  totals: RunTotals,
): Promise<ServerMetricsSection | null> {
  if (report === null) return null;
  const window = windowOf(totals, report);
  return writeServerMetricsExports(
    config.artifactDir,
    report,
    window,
    packageVersion(),
    serverMetricsFormatsOf(config),
  );
}

/** The server-metrics files the run keeps (`--server-metrics-formats`, else the default three). */
export function serverMetricsFormatsOf(config: Pick<RunPlan, 'serverMetricsFormats'>): ReadonlySet<string> {
  return new Set(config.serverMetricsFormats ?? DEFAULT_SERVER_METRICS_FORMATS);
}

/**
 * Removes `server_metrics_export.jsonl` when `--server-metrics-formats` leaves it out: it is written
 * while the run goes (the other files and the report are built from it), so it goes last.
 * @throws the file system error of a failed removal.
 */
export async function pruneServerMetricsFiles(
  config: Pick<RunPlan, 'serverMetricsFormats' | 'artifactDir'>,
): Promise<void> {
  if (serverMetricsFormatsOf(config).has('jsonl')) return;
  await rm(join(config.artifactDir, SERVER_METRICS_JSONL_FILE_NAME), { force: true });
}

const pct = (x: number | null | undefined): string =>
  typeof x === 'number' ? `${(x * 100).toFixed(1)} %` : 'N/A';

/** The console line: per endpoint, its scrapes, KV-cache usage and prefix-cache hit rate. */
export function serverMetricsLine(section: ServerMetricsSection): string {
  const parts = section.endpoints.map((e) => {
    if (e.status === 'unavailable') return `${e.url} unavailable (${e.reason})`;
    const kv = e.metrics.kv_cache_usage;
    const hit = e.metrics.prefix_cache_hit_rate;
    const facts = [`${e.scrapes} scrapes`];
    if (kv?.kind === 'gauge') facts.push(`KV-cache usage avg ${pct(kv.avg)}, max ${pct(kv.max)}`);
    if (hit?.kind === 'ratio') facts.push(`prefix-cache hit rate ${pct(hit.value)}`);
    if (e.failed_scrapes > 0) facts.push(`${e.failed_scrapes} failed (${e.last_error})`);
    return `${e.url}: ${facts.join(', ')}`;
  });
  return `Server metrics: ${parts.join('; ')}`;
}
