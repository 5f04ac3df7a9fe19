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
 * A `--server-metrics` URL as scraped: `http://` implied, no trailing slash, `/metrics` added when
 * it has no path.
 * @throws {ConfigError} (option `--server-metrics`) for text that is not an http(s) URL, or one with
 *   credentials (`user:pw@`, which HTTP clients do not send).
 */
export function normalizeMetricsUrl(text: string): string {
  const trimmed = text.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed) ? trimmed : `http://${trimmed}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new ConfigError(`not a URL: "${text}".`, '--server-metrics');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ConfigError(
      `only http:// and https:// are supported, got "${url.protocol}".`,
      '--server-metrics',
    );
  if (url.username !== '' || url.password !== '')
    throw new ConfigError(
      `a URL's user:password@ is not sent to the server; put credentials in --api-key or -H 'Authorization: …' (sent to /metrics on the --url servers).`,
      '--server-metrics',
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
  for (const url of [...targets.map(defaultMetricsUrl), ...extra.map(normalizeMetricsUrl)])
    if (!out.includes(url)) out.push(url);
  return out;
}
