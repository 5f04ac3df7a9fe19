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
  /** URL path (e.g. `/v1/chat/completions`); the origin is the client's (that of its server). */
  path: string;
  /**
   * Which of the client's servers (0-based, in `--url` order) the request goes to; absent = 0, the
   * only one of a single-server client.
   */
  server?: number;
  /** Extra headers (auth, `-H`, X-Request-ID, X-Correlation-ID are added by the caller). */
  headers: Record<string, string>;
  /**
   * Serialized JSON body: its UTF-8 bytes (as the sender builds it ahead of the send, so the send
   * itself neither encodes nor copies it), or text (encoded when sent).
   */
  body: string | Uint8Array;
  /** Parse the response as an SSE stream. */
  stream: boolean;
  adapter: EndpointAdapter;
  /** Total budget for the request from send to end of body, ms (`--request-timeout-seconds` × 1000). */
  timeoutMs: number;
  /** Aborting records the request as cancelled (code 499). */
  signal?: AbortSignal;
  /**
   * Called once, when the response's first content chunk (the first token, reasoning included)
   * arrives; the prefill gate releases its slot there. Single-process client only (a function does
   * not cross to a worker thread).
   */
  onFirstToken?: () => void;
}

/** A connection-pooled HTTP client bound to one origin, or one per server (client/multi-server.ts). */
export interface HttpClient {
  /** Sends one request; resolves with its record, never rejects. */
  send(request: SendRequest): Promise<RawRecord>;
  /**
   * Optional: `count` requests are built and will be sent, the earliest at `dueNs` (client ns; now
   * when absent); have a connection ready for each that the free ones do not cover, opened in the
   * background just before `dueNs` (connector.ts). Never throws.
   */
  reserveConnections?(count: number, dueNs?: number): void;
  /** Closes pooled connections. */
  close(): Promise<void>;
}
