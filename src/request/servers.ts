/**
 * The servers of a run (`--url`, once or several times) and which one a request goes to. Sessions
 * are spread round-robin in the order they start (session `k` of a phase goes to server
 * `k mod servers`), and every turn of a session goes to its session's server, so a server's prefix
 * cache sees a conversation's whole history (a trace replay's conversation is one session). AIPerf's
 * `--url-strategy round_robin` assigns each request on its own; tokenload keeps sessions whole.
 */

import type { ProfileConfig } from '../config/resolve.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import { endpointPathFor, requestPathFor } from '../endpoint/types.js';
import { ConfigError } from '../errors.js';

/** One server of the run. */
export interface ServerTarget {
  /** The server as `--url` gave it, normalized: origin plus any base path (`http://host:8000/v1`). */
  url: string;
  /** The URL path its requests are posted to: the base path joined with the endpoint's path, and `--url`'s query. */
  path: string;
}

/** What decides where a run's requests go: its endpoint and `--endpoint`, and its servers. */
export interface RouteInput {
  config: Pick<ProfileConfig, 'streaming' | 'endpointPath'>;
  adapter: EndpointAdapter;
  /** The servers' base URLs (origin + optional base path), in `--url` order. */
  targets: readonly string[];
}

/**
 * Every server of the run, in `--url` order, with the path its requests go to.
 * @throws {ConfigError} naming both `--url`s when two send their requests to the same URL
 *   (`host:8000` and `host:8000/v1`: the endpoint's `/v1` is not doubled): one server would get two
 *   shares of the sessions and be reported as two.
 */
export function serverTargets(ctx: RouteInput): ServerTarget[] {
  const { config, adapter } = ctx;
  const endpointPath = endpointPathFor(adapter, config.streaming, config.endpointPath);
  const targets = ctx.targets.map((url) => ({ url, path: requestPathFor(url, endpointPath) }));
  const seen = new Map<string, string>();
  for (const target of targets) {
    const requestUrl = requestUrlOf(target);
    const first = seen.get(requestUrl);
    if (first !== undefined)
      throw new ConfigError(
        `--url ${first} and --url ${target.url} both send to ${requestUrl}: one server listed twice would get two shares of the sessions and be reported as two; give it once.`,
        '--url',
      );
    seen.set(requestUrl, target.url);
  }
  return targets;
}

/** Whether `hostname` (as `URL` gives it) names this machine's loopback interface. */
function isLoopback(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname === '[::1]' ||
    hostname === '0.0.0.0' ||
    /^127\.\d+\.\d+\.\d+$/.test(hostname)
  );
}

/**
 * Warnings for servers given under two loopback names (`localhost:8000` and `127.0.0.1:8000`) that
 * post to the same port and path: most likely one server listed twice (two shares of the sessions,
 * reported as two). Not refused: a proxy on this machine can route the two names to two backends.
 * Names are not resolved (two DNS names of one address are commonly two virtual hosts).
 */
export function loopbackTwiceWarnings(servers: readonly ServerTarget[]): string[] {
  const seen = new Map<string, string>();
  const out: string[] = [];
  for (const server of servers) {
    const url = new URL(server.url);
    if (!isLoopback(url.hostname)) continue;
    const key = `${url.protocol}${url.port}${server.path}`;
    const first = seen.get(key);
    if (first === undefined) seen.set(key, server.url);
    else
      out.push(
        `--url ${first} and --url ${server.url} are both this machine's port ${url.port || '80'}: unless a proxy routes the two names to two servers, one server is listed twice and gets two shares of the sessions, reported as two`,
      );
  }
  return out;
}

/** The full URL a server's requests are posted to, e.g. `http://127.0.0.1:8000/v1/chat/completions`. */
export function requestUrlOf(server: ServerTarget): string {
  return `${new URL(server.url).origin}${server.path}`;
}

/**
 * Index of the server of the session numbered `sessionNum` (0-based, in start order, AIPerf's
 * `session_num`) among `servers` servers: round-robin over sessions, the same for every turn.
 */
export function serverOfSession(sessionNum: number, servers: number): number {
  return sessionNum % servers;
}

/**
 * The line that says where requests go when a server's `--url` path was not simply joined with the
 * endpoint path (it already held `/v1` or the whole path, or ends in `/v1` before a path outside
 * `/v1`); null when the two simply join.
 */
export function joinedPathNote(ctx: Omit<RouteInput, 'targets'>, server: ServerTarget): string | null {
  const base = new URL(server.url).pathname.replace(/\/+$/, '');
  const endpointPath = endpointPathFor(ctx.adapter, ctx.config.streaming, ctx.config.endpointPath);
  const path = new URL(requestUrlOf(server)).pathname;
  // A path with /v1 twice has its own warning, which says where the requests go (url-path-check.ts).
  if (path === base + endpointPath || hasV1Twice(path)) return null;
  const why = path.startsWith(base)
    ? 'not doubled, as AIPerf joins them'
    : `an OpenAI base URL's /v1 is left out: ${endpointPath} is not under /v1`;
  return `--url has the path ${base}: requests go to ${requestUrlOf(server)} (${why})`;
}

/** True when `path` names `/v1` more than once (`/v1/v1/chat/completions`). */
export function hasV1Twice(path: string): boolean {
  return (new URL(path, 'http://x').pathname.match(/\/v1(?=\/|$)/g) ?? []).length > 1;
}
