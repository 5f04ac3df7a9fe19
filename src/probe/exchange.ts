/**
 * One probe request and everything seen of its answer: status, headers, the event stream as events
 * (the product's SSE decoder, client/sse-decoder.ts) or the body as text, and, for a generation
 * request, the record the measuring client would have made of it (client/record-builder.ts fed with
 * the same bytes at the same times), so what the probe reports is what a `profile` run would record.
 * Sent with undici, the measuring client's HTTP library; a probe request is never retried.
 */
import { request } from 'undici';
import { RecordBuilder } from '../client/record-builder.js';
import { SseDecoder } from '../client/sse-decoder.js';
import type { SendRequest } from '../client/types.js';
import { requestHeaders } from '../client/undici-client.js';
import type { RawRecord } from '../record/types.js';
import { monotonicNowNs } from '../timing/clock.js';
import { packageVersion } from '../util/package-root.js';

/** A generation request: its record is made as the measuring client makes it. */
export type GenerationSpec = Pick<SendRequest, 'identity' | 'adapter' | 'stream'>;

/** One probe request. */
export interface ExchangeSpec {
  method: 'GET' | 'POST';
  /** Absolute URL. */
  url: string;
  /** `-H` headers and auth (the client adds accept, user-agent and content-type). */
  headers: Record<string, string>;
  /** JSON body text of a POST. */
  body?: string;
  /** Set for a generation request (chat, completions, …). */
  generation?: GenerationSpec;
  /** Budget from send to the end of the body, ms. */
  timeoutMs: number;
}

/** One server-sent event of an answer. */
export interface ProbeEvent {
  /** Event type (`message` unless the server named one). */
  event: string;
  data: string;
  /** `data` parsed as JSON; undefined when it is not JSON (`[DONE]`). */
  json: unknown;
}

/** What one probe request got. */
export interface ExchangeResult {
  /** HTTP status; null when no answer came (refused, reset, timed out before headers). */
  status: number | null;
  /** Response headers, lower-case names (repeated ones joined with `, `). */
  headers: Record<string, string>;
  /** True when the answer was an event stream (by content type, or sniffed as the client does). */
  streamed: boolean;
  /** The events of an event-stream answer, in order. */
  events: ProbeEvent[];
  /** The body as text when it was not an event stream (at most {@link MAX_TEXT_BYTES}). */
  text: string;
  /** The measuring client's record of a generation request; null for other requests. */
  record: RawRecord | null;
  /** Why the exchange ended without a whole answer (transport error, timeout); null when it did not. */
  failure: string | null;
  /** Send to end of body (or failure), ms. */
  ms: number;
}

/** Most body bytes kept as text. */
export const MAX_TEXT_BYTES = 256 * 1024;

function headerMap(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function parseJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** Collects one answer's body: as events when it streams, else as text; feeds the record builder. */
class Reader {
  readonly events: ProbeEvent[] = [];
  private readonly parts: Buffer[] = [];
  private bytes = 0;
  private decoder: SseDecoder | null = null;

  constructor(private readonly builder: RecordBuilder | null) {}

  headers(status: number, headers: Record<string, string>, atNs: number): void {
    this.builder?.onHeaders(status, headers, '', atNs);
    const streamed = this.builder?.raw.responseStreamed;
    const eventStream = (headers['content-type'] ?? '').includes('text/event-stream');
    if (streamed === true || (this.builder === null && eventStream)) this.decoder = new SseDecoder();
  }

  data(chunk: Buffer, atNs: number): void {
    this.builder?.onData(chunk, atNs);
    // The builder may have sniffed a JSON body behind an event-stream-less content type.
    if (this.decoder !== null && this.builder?.raw.responseStreamed === false) this.decoder = null;
    if (this.decoder !== null) this.keep(this.decoder.push(chunk, atNs));
    else if (this.bytes < MAX_TEXT_BYTES) {
      this.parts.push(chunk);
      this.bytes += chunk.length;
    }
  }

  end(atNs: number): void {
    if (this.decoder !== null) this.keep(this.decoder.end(atNs).events);
  }

  get streamed(): boolean {
    return this.decoder !== null;
  }

  text(): string {
    return Buffer.concat(this.parts).toString('utf8').slice(0, MAX_TEXT_BYTES);
  }

  private keep(events: readonly { event: string; data: string }[]): void {
    for (const e of events) this.events.push({ event: e.event, data: e.data, json: parseJson(e.data) });
  }
}

const USER_AGENT = `tokenload/${packageVersion()}`;

/** The request a generation spec stands for, as the sender hands it to the measuring client. */
function sendRequestOf(spec: ExchangeSpec, g: GenerationSpec): SendRequest {
  const path = new URL(spec.url).pathname;
  return { ...g, path, headers: spec.headers, body: spec.body ?? '', timeoutMs: spec.timeoutMs };
}

/** Headers sent: the measuring client's for a generation request; else `-H`/auth plus ours. */
function headersOf(spec: ExchangeSpec, send: SendRequest | null): Record<string, string> {
  if (send !== null) return requestHeaders(send, USER_AGENT);
  const headers: Record<string, string> = { 'user-agent': USER_AGENT };
  for (const [k, v] of Object.entries(spec.headers)) headers[k.toLowerCase()] = v;
  if (spec.body !== undefined) headers['content-type'] = 'application/json';
  return headers;
}

/** What the transport gave: the answer's status and headers, or the error that ended it. */
interface Transport {
  status: number | null;
  headers: Record<string, string>;
  error: unknown;
}

async function transfer(
  spec: ExchangeSpec,
  send: SendRequest | null,
  reader: Reader,
  signal: AbortSignal,
): Promise<Transport> {
  const t: Transport = { status: null, headers: {}, error: null };
  try {
    const res = await request(spec.url, {
      method: spec.method,
      headers: headersOf(spec, send),
      ...(spec.body === undefined ? {} : { body: spec.body }),
      signal,
    });
    t.status = res.statusCode;
    t.headers = headerMap(res.headers);
    reader.headers(t.status, t.headers, monotonicNowNs());
    for await (const chunk of res.body) reader.data(chunk as Buffer, monotonicNowNs());
    reader.end(monotonicNowNs());
  } catch (err) {
    t.error = err ?? new Error('request failed');
  }
  return t;
}

/** Sends `spec` and reads its whole answer. Never rejects: a failure is in the result. */
export async function exchange(spec: ExchangeSpec): Promise<ExchangeResult> {
  const send = spec.generation === undefined ? null : sendRequestOf(spec, spec.generation);
  const builder = send === null ? null : new RecordBuilder(send);
  const reader = new Reader(builder);
  const startNs = monotonicNowNs();
  if (builder !== null) builder.raw.startNs = startNs;
  const signal = AbortSignal.timeout(spec.timeoutMs);
  const t = await transfer(spec, send, reader, signal);
  const endNs = monotonicNowNs();
  const timedOut = t.error !== null && signal.aborted;
  let record: RawRecord | null = null;
  if (builder !== null) {
    if (t.error === null) record = builder.end(endNs);
    else if (timedOut) record = builder.stop({ kind: 'timeout', timeoutMs: spec.timeoutMs }, endNs);
    else record = builder.stop({ kind: 'transport', error: t.error }, endNs);
  }
  return {
    status: t.status,
    headers: t.headers,
    streamed: reader.streamed,
    events: reader.events,
    text: reader.text(),
    record,
    failure:
      t.error === null ? null : timedOut ? `no whole answer within ${spec.timeoutMs} ms` : describe(t.error),
    ms: (endNs - startNs) / 1e6,
  };
}

function describe(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  return code === '' ? message : `${code}: ${message}`;
}
