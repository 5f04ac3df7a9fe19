/**
 * Serving of the simulator's extra generation routes (Responses API, TGI): the same pipeline as
 * chat/completions (fault draw, model check, prompt tokenization, KV block keys, scheduling), with
 * the request parsed and the response shaped by a {@link GenerateRoute}.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import {
  admitSequence,
  checkModel,
  type HandlerContext,
  holdOpen,
  newTimeline,
  nextRequestId,
  pickFault,
  readBody,
  rejectEarly,
} from './handler.js';
import { RequestError } from './request-parse.js';
import { type RouteRequest, RouteWriter, type WireFormat } from './routes-writer.js';

/** One extra generation API: its ground-truth label, request parser and wire format. */
export interface GenerateRoute {
  /** `endpoint` of its ground-truth lines. */
  endpoint: string;
  /**
   * Parses a request body.
   * @throws {RequestError} 400 for invalid JSON or fields.
   */
  parse(raw: string, defaultMaxTokens: number): RouteRequest;
  format: WireFormat;
  /** The API names no model (TGI): skip the configured-model check. */
  modelless?: boolean;
}

/** Parses JSON text into an object. @throws {RequestError} 400 otherwise. */
export function parseJsonObject(raw: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new RequestError(400, 'request body is not valid JSON', null, 'invalid_request_error');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RequestError(400, 'request body must be a JSON object', null, 'invalid_request_error');
  }
  return body as Record<string, unknown>;
}

/** A positive integer field, or undefined when absent. @throws {RequestError} 400 otherwise. */
export function positiveIntField(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v) || (v as number) < 1) {
    throw new RequestError(400, `'${key}' must be a positive integer`, key, 'invalid_request_error');
  }
  return v as number;
}

function startRouteSequence(
  ctx: HandlerContext,
  route: GenerateRoute,
  res: ServerResponse,
  parsed: RouteRequest,
  fault: Fault,
  t: RequestTimeline,
): void {
  const ids = ctx.tokenizer.encode(parsed.promptText);
  const output = ctx.opts.reasoningTokens + parsed.maxTokens;
  const meta = { id: t.id, model: parsed.model, created: Math.floor(Date.now() / 1000) };
  admitSequence(
    ctx,
    res,
    t,
    ids,
    output,
    'input',
    (cancel, done) => new RouteWriter(res, route.format, meta, parsed, ctx.opts, fault, t, cancel, done),
  );
}

/** Serves one POST to an extra generation route. Never throws; every outcome is an HTTP response. */
export async function handleRoute(
  ctx: HandlerContext,
  route: GenerateRoute,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const arrivalNs = monotonicNowNs();
  ctx.counters.requests++;
  ctx.open.add(res);
  const fault = pickFault(ctx, req);
  const t = newTimeline(nextRequestId(), req, route.endpoint, fault, arrivalNs);
  try {
    const parsed = route.parse(await readBody(req), ctx.opts.defaultMaxTokens);
    if (route.modelless !== true) checkModel(ctx, parsed);
    if (fault.kind === 'status') return rejectEarly(ctx, res, t, fault.status, `simulated ${fault.status}`);
    if (fault.kind === 'hang') return holdOpen(ctx, res, t);
    if (fault.kind === 'slow-headers') await new Promise((r) => setTimeout(r, fault.delayMs));
    if (res.destroyed) return;
    startRouteSequence(ctx, route, res, parsed, fault, t);
  } catch (err) {
    const e = err instanceof RequestError ? err : new RequestError(500, (err as Error).message);
    if (!res.headersSent) rejectEarly(ctx, res, t, e.status, e.message);
  }
}
