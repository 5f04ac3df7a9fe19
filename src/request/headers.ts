/**
 * The HTTP headers a run sends: the endpoint type's own headers, the user's `-H` values and
 * `--api-key` on every request to the target, and AIPerf's request and session ids (plus
 * `--session-header`'s names) on the measured ones.
 */
import type { ProfileConfig } from '../config/resolve.js';
import { ENDPOINTS } from '../endpoint/registry.js';

/**
 * The headers of a request of the run's own (not a measured one): the endpoint type's default
 * headers (Anthropic's `anthropic-version`) unless `-H` names them (any case), the `-H` values, then
 * `--api-key` as the endpoint carries it (`Authorization: Bearer <key>`, Anthropic's `x-api-key`).
 */
export function headersOf(
  config: Pick<ProfileConfig, 'headers' | 'apiKey'> & Partial<Pick<ProfileConfig, 'endpointType'>>,
): Record<string, string> {
  const adapter = ENDPOINTS[config.endpointType ?? 'chat'];
  const given = new Set(Object.keys(config.headers).map((name) => name.toLowerCase()));
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(adapter.defaultHeaders ?? {}))
    if (!given.has(name)) headers[name] = value;
  Object.assign(headers, config.headers);
  if (config.apiKey !== undefined) {
    Object.assign(
      headers,
      adapter.authHeaders?.(config.apiKey) ?? { authorization: `Bearer ${config.apiKey}` },
    );
  }
  return headers;
}

/**
 * The headers that carry a session's id: `x-correlation-id` (AIPerf), `x-session-affinity` (AIPerf's
 * newest), then each `--session-header` name (lower case), all with the same value, set in `into`
 * (a request's headers, so a send allocates no second object) and returned. A single-turn request
 * is a session of its own.
 */
export function sessionIdHeaders(
  sessionHeaders: readonly string[] | undefined,
  sessionId: string,
  into: Record<string, string> = {},
): Record<string, string> {
  into['x-correlation-id'] = sessionId;
  into['x-session-affinity'] = sessionId;
  for (const name of sessionHeaders ?? []) into[name.toLowerCase()] = sessionId;
  return into;
}

/**
 * The headers of one measured request: {@link headersOf}, `x-request-id`, then the session id's
 * headers ({@link sessionIdHeaders}).
 */
export function requestHeaders(
  config: Pick<ProfileConfig, 'headers' | 'apiKey'> &
    Partial<Pick<ProfileConfig, 'endpointType' | 'sessionHeaders'>>,
  requestId: string,
  correlationId: string,
): Record<string, string> {
  const headers = headersOf(config);
  headers['x-request-id'] = requestId;
  return sessionIdHeaders(config.sessionHeaders, correlationId, headers);
}
