/**
 * Before anything is sent: warnings about a `--url` whose path will not reach the endpoint. A base
 * path that is another endpoint's path (`…/v1/completions` with `--endpoint-type chat`) is joined in
 * front of this endpoint's path (`/v1/completions/v1/chat/completions`); a path naming `/v1` twice is
 * as odd; and a 404 to the `/v1/models` probe (preflight.ts, its URL derived as the requests') says
 * the base path may be wrong, when the requests' path is under the same base.
 */

import { ENDPOINTS } from '../endpoint/registry.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import { hasV1Twice } from '../request/servers.js';

/** What the checks read of the run. */
export interface UrlPathFacts {
  /** `--url` (origin plus optional base path). */
  target: string;
  adapter: EndpointAdapter;
  /** The path requests are posted to (`requestPathFor`). */
  requestPath: string;
  /** The `/v1/models` probe's URL and HTTP status. */
  probe: { url: string; status: number };
}

/** The other endpoint whose path `base` ends with, or null. */
function otherEndpointOf(base: string, adapter: EndpointAdapter): string | null {
  for (const [name, other] of Object.entries(ENDPOINTS)) {
    if (other.name === adapter.name) continue;
    const paths = [other.defaultPath, other.streamingPath].filter(
      (p): p is string => p !== undefined && p !== '',
    );
    if (paths.some((p) => base.endsWith(p))) return name;
  }
  return null;
}

/**
 * True when the `/v1/models` probe at `probeUrl` is under the same base as the requests' path: only
 * then does its 404 say something about the requests' path (TGI's `/generate`, or an `--endpoint`
 * outside `/v1`, shares nothing with `/v1/models`).
 */
function sharesBase(probeUrl: string, requestPath: string): boolean {
  const probePath = new URL(probeUrl).pathname;
  const base = probePath.slice(0, probePath.length - '/v1/models'.length);
  return (
    probePath.endsWith('/v1/models') && new URL(requestPath, 'http://x').pathname.startsWith(`${base}/v1/`)
  );
}

/** The warnings of {@link UrlPathFacts}, in the order a user should read them; empty when none. */
export function urlPathWarnings(f: UrlPathFacts): string[] {
  const { origin, pathname } = new URL(f.target);
  const base = pathname.replace(/\/+$/, '');
  const full = `${origin}${f.requestPath}`;
  const requestPathname = new URL(full).pathname;
  const out: string[] = [];
  const other = otherEndpointOf(base, f.adapter);
  if (other !== null && requestPathname !== base) {
    out.push(
      `--url has the path ${base}, the ${other} endpoint's path: with --endpoint-type ${f.adapter.name} requests go to ${full}; give --url without it, or --endpoint-type ${other}`,
    );
  } else if (hasV1Twice(requestPathname)) {
    out.push(
      `--url has the path ${base}: requests go to ${full}, a path with /v1 twice (the endpoint's /v1 is not added again, as AIPerf joins them); check --url`,
    );
  }
  if (f.probe.status === 404 && sharesBase(f.probe.url, f.requestPath)) {
    out.push(
      `GET ${f.probe.url} answered 404 before the run: --url may hold a wrong path (requests go to ${full})`,
    );
  }
  return out;
}
