/**
 * Why a scrape failed, in words that say only what is known: a host that could not be reached is
 * "not reachable"; a 401 or 403 asks for credentials, and whether tokenload sent any depends on the
 * URL's host (`-H` and `--api-key` go only to a `--url` server's host).
 */

/**
 * What a scrape sent of the run's credentials: `sent` (the URL is on a `--url` server's host and
 * the run has `-H` or `--api-key`), `none_given` (on such a host, but the run has neither),
 * `other_host` (another host: tokenload sends it no credentials).
 */
export type ScrapeCredentials = 'sent' | 'none_given' | 'other_host';

/** Error codes of a connection that never opened: no such host, refused, no route, timed out. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ETIMEDOUT',
]);

/**
 * The reason of a non-200 answer: `answered HTTP 404`, and for a 401 or 403 what it asks for and
 * what was sent.
 */
export function statusReason(status: number, credentials: ScrapeCredentials): string {
  const answered = `answered HTTP ${status}`;
  if (status !== 401 && status !== 403) return answered;
  switch (credentials) {
    case 'other_host':
      return `${answered}: it asks for credentials, which tokenload does not send to a metrics URL on another host (or port) than the --url servers (-H and --api-key go to those only)`;
    case 'none_given':
      return `${answered}: it asks for credentials and none were given (-H or --api-key, sent to a metrics URL on a --url server's host)`;
    case 'sent':
      return `${answered}: it refused the credentials sent (the run's -H and --api-key)`;
  }
}

/**
 * The reason of a scrape that got no answer: `not reachable: connect ECONNREFUSED 10.0.0.5:9400`
 * when the connection never opened, else the error's own message (a timeout, a reset, a body too
 * large).
 */
export function transportReason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && UNREACHABLE_CODES.has(code) ? `not reachable: ${message}` : message;
}
