/**
 * The HTTP headers a run sends: the user's `-H` values and `--api-key` on every request to the
 * target, and AIPerf's request and session ids on the measured ones.
 */
import type { ProfileConfig } from '../config/resolve.js';

/** The headers of a request of the run's own (not a measured one): `-H` values and `--api-key`. */
export function headersOf(config: Pick<ProfileConfig, 'headers' | 'apiKey'>): Record<string, string> {
  return {
    ...config.headers,
    ...(config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` }),
  };
}

/** The headers of one measured request: {@link headersOf} plus `x-request-id` and `x-correlation-id`. */
export function requestHeaders(
  config: Pick<ProfileConfig, 'headers' | 'apiKey'>,
  requestId: string,
  correlationId: string,
): Record<string, string> {
  const headers = headersOf(config);
  headers['x-request-id'] = requestId;
  headers['x-correlation-id'] = correlationId;
  return headers;
}
