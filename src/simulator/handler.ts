/**
 * What every simulator POST route shares: the handler context, the request's arrival (count, fault
 * draw, timeline), the early answers (HTTP errors, the hang fault) and the end of its timeline.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { PromptTokenizer } from '../prompt/fast-encoder.js';
import { monotonicNowNs } from '../timing/clock.js';
import { FAULT_HEADER, type Fault, type FaultPicker, parseFaultHeader } from './faults.js';
import type { GroundTruthLog, RequestTimeline } from './ground-truth.js';
import type { KvPool } from './kv-pool.js';
import type { SimulatorOptions } from './options.js';
import { RequestError } from './request-parse.js';
import { errorBody } from './responses.js';
import type { Scheduler } from './sequence.js';
import type { Counters } from './stats.js';

/** Everything a request handler shares with the server. */
export interface HandlerContext {
  opts: SimulatorOptions;
  tokenizer: PromptTokenizer;
  pool: KvPool;
  scheduler: Scheduler;
  faults: FaultPicker;
  counters: Counters;
  log: GroundTruthLog | null;
}

let nextId = 0;

/** A new simulator request id, `sim-<n>`, unique in this process. */
function nextRequestId(): string {
  return `sim-${nextId++}`;
}

/** Sends an OpenAI-style JSON error. */
export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  const type =
    status >= 500
      ? 'internal_server_error'
      : status === 429
        ? 'rate_limit_exceeded'
        : 'invalid_request_error';
  const body = JSON.stringify(errorBody(message, type, status));
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...extra,
  });
  res.end(body);
}

/** Reads a request body as UTF-8 text. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/**
 * Draws the request's fault; a valid fault header overrides the draw, and the first
 * `coldStartRequests` requests of a cold engine override both (one draw is made all the same).
 */
function pickFault(ctx: HandlerContext, req: IncomingMessage): Fault {
  const drawn = ctx.faults.next();
  // A cold engine (`coldStartRequests`): its first requests (counted from 1) start late, as a slow-headers fault.
  if (ctx.counters.requests <= ctx.opts.coldStartRequests)
    return { kind: 'slow-headers', delayMs: ctx.opts.coldStartMs };
  const header = req.headers[FAULT_HEADER];
  if (typeof header !== 'string') return drawn;
  return parseFaultHeader(header, ctx.opts) ?? drawn;
}

/** A fresh timeline of a request that arrived at `arrivalNs` on `endpoint`. */
function newTimeline(
  id: string,
  req: IncomingMessage,
  endpoint: string,
  fault: Fault,
  arrivalNs: number,
): RequestTimeline {
  const xRequestId = req.headers['x-request-id'];
  return {
    id,
    xRequestId: typeof xRequestId === 'string' ? xRequestId : null,
    endpoint,
    status: 0,
    fault: fault.kind,
    arrivalNs,
    queuedNs: null,
    admittedNs: null,
    firstTokenStepNs: null,
    firstTokenWriteNs: null,
    chunkWriteNs: [],
    endNs: null,
    promptTokens: 0,
    cachedTokens: 0,
    outputTokens: 0,
    batchSizeAtFirstToken: null,
  };
}

/** Counts a finished request by outcome and writes its ground-truth line. */
export function finishTimeline(ctx: HandlerContext, t: RequestTimeline): void {
  if (t.status === 200 && t.fault === 'none') ctx.counters.completed++;
  else if (t.status === 499) ctx.counters.clientAborts++;
  else if (t.status >= 400) ctx.counters.httpErrors++;
  else ctx.counters.midStreamFaults++;
  ctx.log?.write(t);
}

/** Answers with an HTTP error before any token (Retry-After on 429/503) and finishes the timeline. */
function rejectEarly(
  ctx: HandlerContext,
  res: ServerResponse,
  t: RequestTimeline,
  status: number,
  msg: string,
): void {
  const extra: Record<string, string> =
    status === 429 || status === 503 ? { 'retry-after': String(ctx.opts.retryAfterS) } : {};
  sendError(res, status, msg, extra);
  t.status = status;
  t.endNs = monotonicNowNs();
  finishTimeline(ctx, t);
}

/** @throws {RequestError} 404 when models are configured and `parsed.model` is not one of them. */
export function checkModel(ctx: HandlerContext, parsed: { model: string }): void {
  const models = ctx.opts.models;
  if (models.length > 0 && !models.includes(parsed.model)) {
    throw new RequestError(404, `The model \`${parsed.model}\` does not exist.`, 'model', 'model_not_found');
  }
}

/** The hang fault: never answers; records 499 when the client goes away. */
function holdOpen(ctx: HandlerContext, res: ServerResponse, t: RequestTimeline): void {
  res.on('close', () => {
    t.status = 499;
    t.endNs = monotonicNowNs();
    finishTimeline(ctx, t);
  });
}

/**
 * Acts on the faults that come before any output: a status fault is answered with that HTTP error,
 * a hang holds the request open. True when `fault` was one of them (the request is taken care of).
 */
function takeEarlyFault(ctx: HandlerContext, res: ServerResponse, t: RequestTimeline, fault: Fault): boolean {
  if (fault.kind === 'status') rejectEarly(ctx, res, t, fault.status, `simulated ${fault.status}`);
  else if (fault.kind === 'hang') holdOpen(ctx, res, t);
  else return false;
  return true;
}

/** One POST route, as {@link serveRequest} runs it. */
export interface RequestHandler<P> {
  /** `endpoint` of its ground-truth lines. */
  endpoint: string;
  /**
   * The route acts only on the faults that come before any output (status, hang, slow-headers) and
   * records any other drawn fault as `none` (embeddings).
   */
  earlyFaultsOnly?: boolean;
  /**
   * Parses and checks a request body.
   * @throws {RequestError} for an invalid body or an unknown model.
   */
  parse(raw: string): P;
  /** Answers a parsed request that no status or hang fault took (slow-headers is its to apply). */
  serve(parsed: P, fault: Fault, t: RequestTimeline): Promise<void> | void;
}

/**
 * Serves one POST: counts it, draws its fault, opens its timeline, reads and parses the body, acts
 * on a status or hang fault, then lets the route answer. An error thrown before the response's
 * headers are sent becomes an HTTP error response (a {@link RequestError} its status, anything else
 * 500). Never throws.
 */
export async function serveRequest<P>(
  ctx: HandlerContext,
  handler: RequestHandler<P>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const arrivalNs = monotonicNowNs();
  ctx.counters.requests++;
  const fault = pickFault(ctx, req);
  const t = newTimeline(nextRequestId(), req, handler.endpoint, fault, arrivalNs);
  const early = fault.kind === 'status' || fault.kind === 'hang' || fault.kind === 'slow-headers';
  if (handler.earlyFaultsOnly === true && !early) t.fault = 'none';
  try {
    const parsed = handler.parse(await readBody(req));
    if (takeEarlyFault(ctx, res, t, fault)) return;
    await handler.serve(parsed, fault, t);
  } catch (err) {
    const e = err instanceof RequestError ? err : new RequestError(500, (err as Error).message);
    if (!res.headersSent) rejectEarly(ctx, res, t, e.status, e.message);
  }
}
