/**
 * Before the schedule starts: one `GET <base>/v1/models` to the target (one `/v1` when the base
 * path ends in it, as for requests: `requestPathFor`). It warms the HTTP stack
 * (undici compiles its parser lazily, ~35 ms the first time, which would otherwise land inside the
 * first request's TTFT) and fails fast with a clear message when nothing listens at `--url`. Any
 * HTTP answer, even 404, counts as reachable; only its status is kept (url-path-check.ts reads a 404).
 */
import { request } from 'undici';
import { requestPathFor } from '../endpoint/types.js';
import { TokenloadError } from '../errors.js';

/** The server could not be reached at all. */
export class ServerUnreachableError extends TokenloadError {
  override readonly name = 'ServerUnreachableError';
  constructor(message: string) {
    super('E_UNREACHABLE', message);
  }
}

/**
 * Probes `target` (origin plus optional base path).
 * @returns the probe's URL and HTTP status.
 * @throws {ServerUnreachableError} on connection refused, DNS failure or a 10 s timeout.
 */
export async function preflight(
  target: string,
  headers: Record<string, string>,
): Promise<{ url: string; status: number }> {
  const url = `${new URL(target).origin}${requestPathFor(target, '/v1/models')}`;
  try {
    const res = await request(url, { method: 'GET', headers, headersTimeout: 10_000, bodyTimeout: 10_000 });
    await res.body.dump();
    return { url, status: res.statusCode };
  } catch (err) {
    const code = (err as { code?: string }).code ?? (err as Error).name;
    throw new ServerUnreachableError(
      `cannot reach ${target} (${code}: ${(err as Error).message}); is the server running? (--url)`,
    );
  }
}
