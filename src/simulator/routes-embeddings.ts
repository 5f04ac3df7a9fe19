/**
 * Simulator route `POST /v1/embeddings` (OpenAI API reference, "Create embeddings"):
 * `{model, input}` with `input` a string, strings, token ids or lists of token ids, or (vLLM's
 * chat-style form) `{model, messages}`, embedded as one input. Answered after
 * `ttftMs` (+ `ttftPerUncachedTokenMs` per prompt token) with
 * `{object:"list", data:[{object:"embedding", index, embedding}], model, usage:{prompt_tokens, total_tokens}}`.
 * Vectors are deterministic: {@link EMBEDDING_DIMENSIONS} floats in [-1, 1) seeded by the input's
 * text (or ids). Not scheduled and not cached. Faults: status, hang and slow-headers apply; the
 * mid-stream ones do not (the request is recorded with no fault).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { checkModel, finishTimeline, type HandlerContext, serveRequest } from './handler.js';
import { isTokenIds, parseJsonObject, RequestError } from './request-parse.js';

/** Length of every simulated embedding vector. */
export const EMBEDDING_DIMENSIONS = 8;

/** One input as text, or as token ids. */
export type EmbeddingInput = { text: string } | { ids: number[] };

/** A parsed embeddings request. */
interface EmbeddingsRequest {
  model: string;
  inputs: EmbeddingInput[];
}

/**
 * The one input of a chat-style body (`messages`, as vLLM takes it on `/v1/embeddings` and AIPerf's
 * `chat_embeddings` sends it): the string contents joined by newlines; null when there is no
 * `messages` array.
 */
function messagesInput(body: Record<string, unknown>): EmbeddingInput | null {
  if (!Array.isArray(body.messages)) return null;
  const texts: string[] = [];
  for (const m of body.messages) {
    const content = (m as { content?: unknown } | null)?.content;
    if (typeof content === 'string') texts.push(content);
  }
  return { text: texts.join('\n') };
}

function inputsOf(body: Record<string, unknown>): EmbeddingInput[] {
  const chatStyle = body.input === undefined ? messagesInput(body) : null;
  if (chatStyle !== null) return [chatStyle];
  const input = body.input;
  if (typeof input === 'string') return [{ text: input }];
  if (isTokenIds(input)) return [{ ids: input }];
  if (
    Array.isArray(input) &&
    input.length > 0 &&
    input.every((x) => typeof x === 'string' || isTokenIds(x))
  ) {
    return input.map((x) => (typeof x === 'string' ? { text: x } : { ids: x as number[] }));
  }
  throw new RequestError(
    400,
    "'input' must be a string, strings, or token ids (or give 'messages')",
    'input',
    'invalid_request_error',
  );
}

/** A deterministic vector for `key`: FNV-1a seed, then xorshift32, 6 decimals. */
export function embeddingOf(key: string): number[] {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  const out: number[] = [];
  for (let i = 0; i < EMBEDDING_DIMENSIONS; i++) {
    h ^= h << 13;
    h ^= h >>> 17;
    h ^= h << 5;
    h >>>= 0;
    out.push(Math.round((h / 2 ** 31 - 1) * 1e6) / 1e6);
  }
  return out;
}

/** The body's model and inputs. @throws {RequestError} 400 for an invalid body, 404 for an unknown model. */
function parseEmbeddingsRequest(ctx: HandlerContext, raw: string): EmbeddingsRequest {
  const body = parseJsonObject(raw);
  const model = typeof body.model === 'string' ? body.model : '';
  checkModel(ctx, { model });
  return { model, inputs: inputsOf(body) };
}

/** One answer's inputs, and the body that answers them. */
export interface EmbeddingAnswer {
  inputs: EmbeddingInput[];
  /** The success body of `inputs`, their prompt tokens counted. */
  body(promptTokens: number): unknown;
}

/**
 * Answers `answer` after the modelled delay (`ttftMs` + `ttftPerUncachedTokenMs` per prompt token,
 * plus a slow-headers fault's) and finishes the timeline.
 */
export async function answerAfterDelay(
  ctx: HandlerContext,
  res: ServerResponse,
  answer: EmbeddingAnswer,
  fault: Fault,
  t: RequestTimeline,
): Promise<void> {
  let tokens = 0;
  for (const input of answer.inputs)
    tokens += 'ids' in input ? input.ids.length : ctx.tokenizer.encode(input.text).length;
  t.promptTokens = tokens;
  ctx.counters.promptTokens += tokens;
  const extraMs = fault.kind === 'slow-headers' ? fault.delayMs : 0;
  const delayMs = ctx.opts.ttftMs + ctx.opts.ttftPerUncachedTokenMs * tokens + extraMs;
  await new Promise((r) => setTimeout(r, delayMs));
  if (res.destroyed) return;
  const body = JSON.stringify(answer.body(tokens));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  t.firstTokenWriteNs = monotonicNowNs();
  t.chunkWriteNs.push(t.firstTokenWriteNs);
  t.status = 200;
  t.endNs = t.firstTokenWriteNs;
  finishTimeline(ctx, t);
}

/** The OpenAI answer to `request`. */
function openAiAnswer({ model, inputs }: EmbeddingsRequest): EmbeddingAnswer {
  return {
    inputs,
    body: (promptTokens) => ({
      object: 'list',
      data: inputs.map((input, index) => ({ object: 'embedding', index, embedding: vectorOf(input) })),
      model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    }),
  };
}

/** The vector of one input ({@link embeddingOf} of its text, or of its ids joined by commas). */
export function vectorOf(input: EmbeddingInput): number[] {
  return embeddingOf('text' in input ? input.text : input.ids.join(','));
}

/** Serves one `POST /v1/embeddings`. Never throws. */
export function handleEmbeddings(
  ctx: HandlerContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return serveRequest(
    ctx,
    {
      endpoint: 'embeddings',
      earlyFaultsOnly: true,
      parse: (raw) => parseEmbeddingsRequest(ctx, raw),
      serve: (parsed, fault, t) => answerAfterDelay(ctx, res, openAiAnswer(parsed), fault, t),
    },
    req,
    res,
  );
}
