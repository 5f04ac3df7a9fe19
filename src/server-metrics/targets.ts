/**
 * Which `/metrics` URLs a run scrapes (AIPerf's rule): the server's own, `<server root>/metrics`,
 * always; plus every URL given to `--server-metrics`, `http://` implied, `/metrics` added to a URL
 * without a path (a URL with a path is used as it is). Duplicates are scraped once.
 */
import { ConfigError } from '../errors.js';

/**
 * `/metrics` of the server behind `target` (`--url`: origin plus optional base path). The metrics
 * live at the server root, not under the OpenAI base path: `http://h:8000/v1` → `http://h:8000/metrics`;
 * a base path before `/v1` is kept (`http://gw/llama/v1` → `http://gw/llama/metrics`), and so is a
 * base path without `/v1` (`http://gw/llama` → `http://gw/llama/metrics`).
 */
export function defaultMetricsUrl(target: string): string {
  const url = new URL(target);
  const path = url.pathname.replace(/\/+$/, '');
  const v1 = path.search(/\/v1(?:\/|$)/);
  const base = v1 === -1 ? path : path.slice(0, v1);
  return `${url.origin}${base}/metrics`;
}

/**
 * A `--server-metrics` (or `--gpu-telemetry`, `option`) URL as scraped: `http://` implied, no
 * trailing slash, `/metrics` added when it has no path.
 * @throws {ConfigError} (naming `option`) for text that is not an http(s) URL, or one with
 *   credentials (`user:pw@`: not taken; the run's `-H` and `--api-key` go only to a `--url` host).
 */
export function normalizeMetricsUrl(text: string, option = '--server-metrics'): string {
  const trimmed = text.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(`not a URL: "${text}".`, option);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(`only http:// and https:// are supported, got "${url.protocol}".`, option);
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      "a metrics URL's user:password@ is not taken. -H and --api-key go to a metrics URL only on a --url server's host; tokenload sends no credentials to another host, so an exporter elsewhere must answer without them.",
      option,
    );
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? '/metrics' : path}${url.search}`;
}

/**
 * The URLs to scrape: each target's own `/metrics`, then the `--server-metrics` URLs, in order,
 * without duplicates.
 */
export function metricsUrls(targets: readonly string[], extra: readonly string[]): string[] {
  const out: string[] = [];
  for (const url of [...targets.map(defaultMetricsUrl), ...extra.map((u) => normalizeMetricsUrl(u))])
    if (!out.includes(url)) out.push(url);
  return out;
}

/** The DCGM exporters `--gpu-telemetry` always tries (AIPerf's defaults: dcgm-exporter's port, Dynamo's). */
export const DEFAULT_DCGM_URLS: readonly string[] = [
  'http://localhost:9400/metrics',
  'http://localhost:9401/metrics',
];

/** What `--gpu-telemetry` takes in AIPerf but tokenload does not, and why. */
const GPU_TELEMETRY_REFUSED: ReadonlyArray<[RegExp, string]> = [
  [/^dashboard$/i, "AIPerf's live dashboard is not in tokenload: report.html draws every GPU over time"],
  [
    /^(pynvml|amdsmi)$/i,
    'tokenload reads GPUs only from a DCGM exporter over HTTP (no NVML or AMD SMI library)',
  ],
  [
    /\.csv$/i,
    'a custom metrics CSV is not taken: tokenload follows the DCGM fields docs/gpu-telemetry.md lists',
  ],
];

/**
 * A `--gpu-telemetry` value as scraped ({@link normalizeMetricsUrl}).
 * @throws {ConfigError} (option `--gpu-telemetry`) for AIPerf's `dashboard`, `pynvml`, `amdsmi` or a
 *   metrics CSV (with the reason), and for a bad URL.
 */
export function normalizeGpuTelemetryUrl(text: string): string {
  const trimmed = text.trim();
  for (const [pattern, why] of GPU_TELEMETRY_REFUSED)
    if (pattern.test(trimmed))
      throw new ConfigError(
        `--gpu-telemetry ${trimmed} is AIPerf's option; tokenload does not take it: ${why}.`,
        '--gpu-telemetry',
      );
  return normalizeMetricsUrl(trimmed, '--gpu-telemetry');
}

/** The DCGM exporters to scrape: AIPerf's two defaults, then the URLs given, without duplicates. */
export function gpuTelemetryUrls(extra: readonly string[]): string[] {
  const out: string[] = [];
  for (const url of [...DEFAULT_DCGM_URLS, ...extra]) if (!out.includes(url)) out.push(url);
  return out;
}
