/**
 * Handling of one chat/completions request: fault draw, validation, prompt tokenization, KV block
 * keys, then submission of a sequence whose tokens a {@link ResponseWriter} streams back.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import { FAULT_HEADER, type Fault, type FaultPicker, parseFaultHeader } from './faults.js';
import type { GroundTruthLog, RequestTimeline } from './ground-truth.js';
import { chainedBlockKeys, type KvPool } from './kv-pool.js';
import type { SimulatorOptions } from './options.js';
import type { PromptTokenizer } from './prompt-tokenizer.js';
import { type EndpointKind, type ParsedRequest, parseRequest, RequestError } from './request-parse.js';
import { ResponseWriter, type WriterDone } from './response-writer.js';
import { errorBody } from './responses.js';
import { newSequence, type Scheduler, type Sequence, type SequenceSink } from './sequence.js';
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
  /** Requests whose response is still open (closed by the server on shutdown). */
  open: Set<ServerResponse>;
}

let nextId = 0;

/** A new simulator request id, `sim-<n>`, unique in this process. */
export function nextRequestId(): string {
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
export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Draws the request's fault; a valid fault header overrides the draw. */
export function pickFault(ctx: HandlerContext, req: IncomingMessage): Fault {
  const drawn = ctx.faults.next();
  const header = req.headers[FAULT_HEADER];
  if (typeof header !== 'string') return drawn;
  return parseFaultHeader(header, ctx.opts) ?? drawn;
}

/** A fresh timeline of a request that arrived at `arrivalNs` on endpoint `kind`. */
export function newTimeline(
  id: string,
  req: IncomingMessage,
  kind: string,
  fault: Fault,
  arrivalNs: number,
): RequestTimeline {
  const xRequestId = req.headers['x-request-id'];
  return {
    id,
    xRequestId: typeof xRequestId === 'string' ? xRequestId : null,
    endpoint: kind,
    status: 0,
    fault: fault.kind,
    arrivalNs,
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
export function rejectEarly(
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
export function checkModel(ctx: HandlerContext, parsed: Pick<ParsedRequest, 'model'>): void {
  const models = ctx.opts.models;
  if (models.length > 0 && !models.includes(parsed.model)) {
    throw new RequestError(404, `The model \`${parsed.model}\` does not exist.`, 'model', 'model_not_found');
  }
}

function startSequence(
  ctx: HandlerContext,
  res: ServerResponse,
  parsed: ParsedRequest,
  fault: Fault,
  t: RequestTimeline,
): void {
  const ids = 'ids' in parsed.prompt ? parsed.prompt.ids : ctx.tokenizer.encode(parsed.prompt.text);
  const output = ctx.opts.reasoningTokens + parsed.maxTokens;
  const meta = { kind: parsed.kind, id: t.id, created: Math.floor(Date.now() / 1000), model: parsed.model };
  admitSequence(
    ctx,
    res,
    t,
    ids,
    output,
    'messages',
    (cancel, done) => new ResponseWriter(res, meta, parsed, ctx.opts, fault, t, cancel, done),
  );
}

/** A response writer the admission step can start and abandon. */
export interface AdmittedWriter extends SequenceSink {
  seq: Sequence | null;
  start(): void;
  abandon(): void;
}

/**
 * Shared admission of a generation request (every route): checks the prompt + output fit the KV
 * pool, counts prompt tokens, builds the writer and its sequence, and submits it to the scheduler.
 * @throws {RequestError} 400 naming `field` when the request can never fit the pool.
 */
export function admitSequence(
  ctx: HandlerContext,
  res: ServerResponse,
  t: RequestTimeline,
  ids: readonly number[],
  output: number,
  field: string,
  makeWriter: (cancel: (s: Sequence) => void, done: WriterDone) => AdmittedWriter,
): void {
  if (ctx.pool.blocksFor(ids.length + output) > ctx.pool.capacityBlocks) {
    throw new RequestError(400, `prompt (${ids.length} tokens) + output exceed the KV capacity`, field);
  }
  t.promptTokens = ids.length;
  ctx.counters.promptTokens += ids.length;
  const writer = makeWriter(
    (s) => ctx.scheduler.cancel(s),
    (done) => {
      ctx.counters.generationTokens += done.outputTokens;
      ctx.open.delete(res);
      finishTimeline(ctx, done);
    },
  );
  const seq = newSequence(
    Number(t.id.slice(4)),
    ids.length,
    chainedBlockKeys(ids as number[], ctx.pool.blockSize),
    output,
    writer,
  );
  writer.seq = seq;
  res.on('close', () => writer.abandon());
  writer.start();
  ctx.scheduler.submit(seq);
}

/** The hang fault: never answers; records 499 when the client goes away. */
export function holdOpen(ctx: HandlerContext, res: ServerResponse, t: RequestTimeline): void {
  res.on('close', () => {
    ctx.open.delete(res);
    t.status = 499;
    t.endNs = monotonicNowNs();
    finishTimeline(ctx, t);
  });
}

/**
 * Serves one POST to a chat or completions path. Never throws; every outcome is an HTTP response
 * (or a deliberate hang/reset).
 */
export async function handleGenerate(
  ctx: HandlerContext,
  kind: EndpointKind,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const arrivalNs = monotonicNowNs();
  ctx.counters.requests++;
  ctx.open.add(res);
  const fault = pickFault(ctx, req);
  const t = newTimeline(nextRequestId(), req, kind, fault, arrivalNs);
  try {
    const parsed = parseRequest(kind, await readBody(req), ctx.opts.defaultMaxTokens);
    checkModel(ctx, parsed);
    if (fault.kind === 'status') return rejectEarly(ctx, res, t, fault.status, `simulated ${fault.status}`);
    if (fault.kind === 'hang') return holdOpen(ctx, res, t);
    if (fault.kind === 'slow-headers') await new Promise((r) => setTimeout(r, fault.delayMs));
    if (res.destroyed) return;
    startSequence(ctx, res, parsed, fault, t);
  } catch (err) {
    const e = err instanceof RequestError ? err : new RequestError(500, (err as Error).message);
    if (!res.headersSent) rejectEarly(ctx, res, t, e.status, e.message);
  }
}
