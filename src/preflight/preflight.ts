/**
 * Before the schedule starts: one `GET <base>/v1/models` to each server, its URL derived as the
 * requests' (`routeUrlFor`: one `/v1` when the base path ends in it, a `--url` naming the whole
 * endpoint read as that endpoint's server, the query carried). It warms the HTTP stack
 * (undici compiles its parser lazily, ~35 ms the first time, which would otherwise land inside the
 * first request's TTFT) and fails fast with a clear message, naming the server, when nothing
 * listens at a `--url`. Any HTTP answer, even 404, counts as reachable; its status is kept
 * (url-path-check.ts reads a 404), and the models a 200 lists (a run where the model is not served
 * names them: export/run-status.ts).
 */
import { request } from 'undici';
import { routeUrlFor } from '../endpoint/types.js';
import { TokenloadError } from '../errors.js';

/** The server could not be reached at all. */
export class ServerUnreachableError extends TokenloadError {
  override readonly name = 'ServerUnreachableError';
  constructor(message: string) {
    super('E_UNREACHABLE', message);
  }
}

/** The `/v1/models` probe's URL and HTTP status, and the models it lists. */
export interface ProbeAnswer {
  url: string;
  status: number;
  /** The `id`s of a 200 OpenAI model list; null for another answer. */
  served: string[] | null;
}

/** The model ids of a `/v1/models` body (`{data: [{id}]}`); null when it is not such a list. */
export function servedModelsOf(text: string): string[] | null {
  try {
    const data = (JSON.parse(text) as { data?: unknown }).data;
    return Array.isArray(data) ? data.map((m) => String((m as { id?: unknown }).id)) : null;
  } catch {
    return null;
  }
}

/** What the probe sends besides its URL. */
export interface ProbeRequest {
  headers: Record<string, string>;
  /** The path the run's requests go to (`endpointPathFor`), to derive the probe's URL as theirs. */
  endpointPath: string;
}

/**
 * Probes `target` (origin plus optional base path).
 * @returns the probe's URL and HTTP status.
 * @throws {ServerUnreachableError} on connection refused, DNS failure or a 10 s timeout.
 */
async function probe(target: string, { headers, endpointPath }: ProbeRequest): Promise<ProbeAnswer> {
  const url = routeUrlFor(target, '/v1/models', endpointPath);
  try {
    const res = await request(url, { method: 'GET', headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
    const text = await res.body.text();
    return { url, status: res.statusCode, served: res.statusCode === 200 ? servedModelsOf(text) : null };
  } catch (err) {
    throw new ServerUnreachableError(unreachableMessage(target, url, err as Error));
  }
}

/** undici's codes for a connection that was made but not answered in time. */
const SILENT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * Why the probe failed, in words: a server that took the connection but did not answer is not
 * "unreachable" (it may be loading a model, or hung), so it is named apart from a refused or
 * unresolvable address.
 */
function unreachableMessage(target: string, url: string, err: Error): string {
  const code = (err as { code?: string }).code ?? err.name;
  if (SILENT_CODES.has(code)) {
    return `${target} accepted the connection but did not answer GET ${url} within 10 s (${code}); is it still starting, or hung? (--url)`;
  }
  return `cannot reach ${target} (${code}: ${err.message}); is the server running? (--url)`;
}

/**
 * Probes every server of the run at once (`--url`, in order).
 * @returns each server's probe answer, in `targets` order.
 * @throws {ServerUnreachableError} naming the first server in `--url` order that cannot be reached
 *   (and how many of the others cannot either), after every probe has settled.
 */
export async function preflight(targets: readonly string[], request: ProbeRequest): Promise<ProbeAnswer[]> {
  const results = await Promise.allSettled(targets.map((target) => probe(target, request)));
  throwFirstFailure(results);
  return results.map((r) => (r as PromiseFulfilledResult<ProbeAnswer>).value);
}

/**
 * Throws the first failure of `results` (one per server, in `--url` order), if any; an unreachable
 * server's error says how many of the others failed too: `… (and 2 more of the 3 servers)`.
 */
export function throwFirstFailure(results: readonly PromiseSettledResult<unknown>[]): void {
  const failures = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const first = failures[0];
  if (first === undefined) return;
  const others = failures.length - 1;
  if (!(first.reason instanceof ServerUnreachableError) || others === 0) throw first.reason;
  throw new ServerUnreachableError(
    `${first.reason.message} (and ${others} more of the ${results.length} servers)`,
  );
}
