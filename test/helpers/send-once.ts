/**
 * Convenience for tests and one-off probes: builds the body with an endpoint adapter, sends one
 * request on a fresh single-connection client, closes it and returns the record.
 */
import { createHttpClient } from '../../src/client/undici-client.js';
import type { ChatMessage } from '../../src/dataset/types.js';
import { ENDPOINTS, type EndpointTypeName } from '../../src/endpoint/registry.js';
import { endpointPathFor } from '../../src/endpoint/types.js';
import type { RawRecord, RequestIdentity } from '../../src/record/types.js';

/** Parameters of {@link sendOnce}. Times in ms. */
export interface SendOnceOptions {
  /** Server origin, e.g. `http://127.0.0.1:8000`. */
  url: string;
  endpoint: EndpointTypeName;
  model: string;
  messages: ChatMessage[];
  stream: boolean;
  maxTokens?: number;
  perChunkUsage?: boolean;
  extraInputs?: Record<string, unknown>;
  /** URL path; default the endpoint's. */
  path?: string;
  headers?: Record<string, string>;
  /** Total request budget in ms; default 10 000. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The identity fields of a one-off request. */
export function oneOffIdentity(model: string, maxTokens?: number): RequestIdentity {
  return {
    conversationId: 'one-off',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: crypto.randomUUID(),
    xCorrelationId: 'one-off',
    model,
    scheduledNs: null,
    inputTokens: null,
    requestedOutputTokens: maxTokens ?? null,
  };
}

/** Sends one request and resolves with its record (never rejects for request failures). */
export async function sendOnce(options: SendOnceOptions): Promise<RawRecord> {
  const adapter = ENDPOINTS[options.endpoint];
  const body = adapter.buildBody({
    model: options.model,
    messages: options.messages,
    stream: options.stream,
    ...(options.maxTokens === undefined ? {} : { maxTokens: options.maxTokens }),
    useLegacyMaxTokens: false,
    perChunkUsage: options.perChunkUsage ?? false,
    extraInputs: options.extraInputs ?? {},
  });
  const client = createHttpClient({ url: options.url, connections: 1 });
  try {
    return await client.send({
      identity: oneOffIdentity(options.model, options.maxTokens),
      path: endpointPathFor(adapter, options.stream, options.path),
      headers: options.headers ?? {},
      body: JSON.stringify(body),
      stream: options.stream,
      adapter,
      timeoutMs: options.timeoutMs ?? 10_000,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
  } finally {
    await client.close();
  }
}
