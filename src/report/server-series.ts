/**
 * A run's server metrics read back for the report: the followed series of each scraped endpoint
 * (server-metrics/known-series.ts) from `server_metrics_export.jsonl`, on the report's time axis
 * (seconds since the first request started), and the summary's `server_metrics` section. Gauges are
 * drawn as scraped; counters as their rate between two scrapes (at the later one); the prefix-cache
 * hit rate as hits / queries between two scrapes.
 */
import { SERVER_METRICS_JSONL_FILE_NAME } from '../server-metrics/exports.js';
import { counterTotals, KNOWN_SERIES, knownValue } from '../server-metrics/known-series.js';
import type { ServerMetricsSection } from '../server-metrics/section.js';
import type { ScrapeLine } from '../server-metrics/snapshot.js';
import { byEndpoint, increase } from '../server-metrics/window.js';
import { readScrapeFile, readSummarySection } from './scrape-file.js';
import type { EndpointSeries, ServerRunData, TimePoints } from './types.js';

const seconds = (line: ScrapeLine, t0Ns: bigint): number => Number(line.timestamp_ns - t0Ns) / 1e9;

/**
 * Value of a known series per scrape (null where the scrape lacks it): a gauge as served, a counter
 * as its running total over its label sets' increases (known-series.ts).
 */
function valuesOf(key: string, lines: readonly ScrapeLine[]): Array<number | null> {
  const series = KNOWN_SERIES.find((s) => s.key === key);
  if (series === undefined) return lines.map(() => null);
  if (series.kind === 'counter') return counterTotals(series, lines)?.totals ?? lines.map(() => null);
  return lines.map((l) => knownValue(series, l.metrics)?.value ?? null);
}

/** Per-interval rates (per second) of counter values, stamped at the later scrape. */
function ratesOf(times: readonly number[], values: ReadonlyArray<number | null>): TimePoints {
  const out: TimePoints = [];
  for (let i = 1; i < values.length; i++) {
    const a = values[i - 1];
    const b = values[i];
    const dt = (times[i] as number) - (times[i - 1] as number);
    if (typeof a === 'number' && typeof b === 'number' && dt > 0)
      out.push([times[i] as number, increase(a, b) / dt]);
  }
  return out;
}

function hitRateOf(times: readonly number[], lines: readonly ScrapeLine[]): TimePoints {
  const hits = valuesOf('prefix_cache_hits', lines);
  const usesSglang = lines.some((l) => 'sglang:cached_tokens' in l.metrics);
  const queries = valuesOf(usesSglang ? 'prompt_tokens' : 'prefix_cache_queries', lines);
  const out: TimePoints = [];
  for (let i = 1; i < lines.length; i++) {
    const [h0, h1, q0, q1] = [hits[i - 1], hits[i], queries[i - 1], queries[i]];
    if (typeof h0 !== 'number' || typeof h1 !== 'number' || typeof q0 !== 'number' || typeof q1 !== 'number')
      continue;
    const dq = increase(q0, q1);
    if (dq > 0) out.push([times[i] as number, increase(h0, h1) / dq]);
  }
  return out;
}

function endpointSeries(url: string, lines: readonly ScrapeLine[], t0Ns: bigint): EndpointSeries {
  const times = lines.map((l) => seconds(l, t0Ns));
  const gauges: Record<string, TimePoints> = {};
  const rates: Record<string, TimePoints> = {};
  for (const s of KNOWN_SERIES) {
    const values = valuesOf(s.key, lines);
    if (values.every((v) => v === null)) continue;
    if (s.kind === 'gauge')
      gauges[s.key] = values.flatMap((v, i) =>
        v === null ? [] : [[times[i] as number, v] as [number, number]],
      );
    else rates[s.key] = ratesOf(times, values);
  }
  return { url, gauges, rates, hitRate: hitRateOf(times, lines) };
}

/**
 * Reads the server metrics of the run in `dir`; null when it has no `server_metrics_export.jsonl`.
 * @param t0Ns the run's time zero (its earliest `request_start_ns`), epoch ns.
 * @throws {RunLoadError} naming the file and line of a malformed line.
 */
export async function loadServerRun(dir: string, t0Ns: bigint): Promise<ServerRunData | null> {
  const lines = await readScrapeFile(dir, SERVER_METRICS_JSONL_FILE_NAME);
  if (lines === null) return null;
  const endpoints = [...byEndpoint(lines)].map(([url, own]) => endpointSeries(url, own, t0Ns));
  return { endpoints, section: await readSummarySection<ServerMetricsSection>(dir, 'server_metrics') };
}
