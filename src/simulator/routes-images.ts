/**
 * Simulator route `POST /v1/images/generations` (OpenAI API reference, "Create image", and its
 * "Image generation streaming events"; SGLang diffusion serves the same route): `{model, prompt, n?,
 * stream?, partial_images?, …}`. Answered after `ttftMs` (+ `ttftPerUncachedTokenMs` per prompt
 * token) with `{created, data: [{b64_json}] × n, usage}`, every image the same 1×1 PNG
 * ({@link TINY_PNG_BASE64}), whatever `size`, `quality` or `response_format` asks. Streamed
 * (`stream: true`): `partial_images` (0–3) `image_generation.partial_image` events `itlMs` apart,
 * then one `image_generation.completed` event, which ends the stream (no `[DONE]`). Not scheduled
 * and not cached. Faults: status, hang and slow-headers apply; the mid-stream ones do not.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { checkModel, finishTimeline, type HandlerContext, serveRequest } from './handler.js';
import { parseJsonObject, RequestError } from './request-parse.js';
import { SSE_HEADERS, sseFrame } from './wire-format.js';

/** A valid 1×1 RGBA PNG (one blue, half-transparent pixel), base64: every image the route returns. */
export const TINY_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** A parsed image request. */
interface ImageRequest {
  model: string;
  prompt: string;
  /** Images asked for (`n`, default 1). */
  count: number;
  stream: boolean;
  /** Partial images to stream before the final one (`partial_images`, 0–3). */
  partials: number;
}

function invalid(message: string, param: string): RequestError {
  return new RequestError(400, message, param, 'invalid_request_error');
}

function intIn(value: unknown, param: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalid(`'${param}' must be an integer from ${min} to ${max}`, param);
  return value;
}

/** @throws {RequestError} 400 for a missing prompt or a bad `n`/`partial_images`, 404 for an unknown model. */
function parseImageRequest(ctx: HandlerContext, raw: string): ImageRequest {
  const body = parseJsonObject(raw);
  const model = typeof body.model === 'string' ? body.model : '';
  checkModel(ctx, { model });
  if (typeof body.prompt !== 'string' || body.prompt === '') throw invalid("'prompt' is required", 'prompt');
  return {
    model,
    prompt: body.prompt,
    count: intIn(body.n, 'n', 1, 10, 1),
    stream: body.stream === true,
    partials: intIn(body.partial_images, 'partial_images', 0, 3, 0),
  };
}

function usageOf(promptTokens: number): Record<string, unknown> {
  return {
    input_tokens: promptTokens,
    output_tokens: 0,
    total_tokens: promptTokens,
    input_tokens_details: { text_tokens: promptTokens, image_tokens: 0 },
  };
}

/** Writes the streamed events: the partial images `itlMs` apart, then the completed one. */
async function writeStream(
  ctx: HandlerContext,
  res: ServerResponse,
  req: ImageRequest,
  t: RequestTimeline,
): Promise<void> {
  res.writeHead(200, SSE_HEADERS);
  const created = Math.floor(Date.now() / 1000);
  for (let i = 0; i < req.partials; i++) {
    const type = 'image_generation.partial_image';
    res.write(
      sseFrame({ type, b64_json: TINY_PNG_BASE64, created_at: created, partial_image_index: i }, type),
    );
    t.chunkWriteNs.push(monotonicNowNs());
    t.firstTokenWriteNs ??= t.chunkWriteNs[0] ?? null;
    await new Promise((r) => setTimeout(r, ctx.opts.itlMs));
    if (res.destroyed) return;
  }
  const type = 'image_generation.completed';
  res.end(
    sseFrame({ type, b64_json: TINY_PNG_BASE64, created_at: created, usage: usageOf(t.promptTokens) }, type),
  );
  t.chunkWriteNs.push(monotonicNowNs());
  t.firstTokenWriteNs ??= t.chunkWriteNs[0] ?? null;
}

function writeWhole(res: ServerResponse, req: ImageRequest, t: RequestTimeline): void {
  const data = Array.from({ length: req.count }, () => ({ b64_json: TINY_PNG_BASE64 }));
  const body = JSON.stringify({
    created: Math.floor(Date.now() / 1000),
    data,
    usage: usageOf(t.promptTokens),
  });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  t.firstTokenWriteNs = monotonicNowNs();
  t.chunkWriteNs.push(t.firstTokenWriteNs);
}

async function answer(
  ctx: HandlerContext,
  res: ServerResponse,
  req: ImageRequest,
  fault: Fault,
  t: RequestTimeline,
): Promise<void> {
  const tokens = ctx.tokenizer.encode(req.prompt).length;
  t.promptTokens = tokens;
  ctx.counters.promptTokens += tokens;
  const extraMs = fault.kind === 'slow-headers' ? fault.delayMs : 0;
  await new Promise((r) =>
    setTimeout(r, ctx.opts.ttftMs + ctx.opts.ttftPerUncachedTokenMs * tokens + extraMs),
  );
  if (res.destroyed) return;
  if (req.stream) await writeStream(ctx, res, req, t);
  else writeWhole(res, req, t);
  t.status = 200;
  t.endNs = monotonicNowNs();
  finishTimeline(ctx, t);
}

/** Serves one `POST /v1/images/generations`. Never throws. */
export function handleImageGeneration(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return serveRequest(
    ctx,
    {
      endpoint: 'image_generation',
      earlyFaultsOnly: true,
      parse: (raw) => parseImageRequest(ctx, raw),
      serve: (parsed, fault, t) => answer(ctx, res, parsed, fault, t),
    },
    req,
    res,
  );
}
