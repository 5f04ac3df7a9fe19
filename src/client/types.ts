/**
 * Transport contract. A client sends one request and always resolves with a {@link RawRecord}:
 * HTTP errors, in-band errors, timeouts, resets and cancellations come back as `record.error`,
 * never as a thrown exception, and are never retried.
 */
import type { EndpointAdapter } from '../endpoint/types.js';
import type { RawRecord, RequestIdentity } from '../record/types.js';

/** One request to send. */
export interface SendRequest {
  /** Copied into the record as is. */
  identity: RequestIdentity;
  /** URL path (e.g. `/v1/chat/completions`); the origin is the client's. */
  path: string;
  /** Extra headers (auth, `-H`, X-Request-ID, X-Correlation-ID are added by the caller). */
  headers: Record<string, string>;
  /** Serialized JSON body. */
  body: string;
  /** Parse the response as an SSE stream. */
  stream: boolean;
  adapter: EndpointAdapter;
  /** Total budget for the request from send to end of body, ms (`--request-timeout-seconds` × 1000). */
  timeoutMs: number;
  /** Aborting records the request as cancelled (code 499). */
  signal?: AbortSignal;
}

/** A connection-pooled HTTP client bound to one origin. */
export interface HttpClient {
  /** Sends one request; resolves with its record, never rejects. */
  send(request: SendRequest): Promise<RawRecord>;
  /** Closes pooled connections. */
  close(): Promise<void>;
}
