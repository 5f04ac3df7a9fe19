/**
 * Simulator rerank routes, answered as each server answers (query plus passages in, one relevance
 * score per passage out, best first):
 * - `POST /rerank` (Hugging Face TEI): `{query, texts}` → `[{index, score}]`;
 * - `POST /v1/rerank` (Cohere Rerank API as vLLM serves it): `{model, query, documents}` →
 *   `{id, model, usage:{total_tokens}, results:[{index, document:{text}, relevance_score}]}`;
 * - `POST /v1/ranking` (NVIDIA NIM): `{model, query:{text}, passages:[{text}]}` →
 *   `{rankings:[{index, logit}]}`.
 * Answered after `ttftMs` (+ `ttftPerUncachedTokenMs` per query and passage token, the query counted
 * once per passage as a cross-encoder reads it). Scores are deterministic (seeded by query and
 * passage). Not scheduled and not cached. Faults: status, hang and slow-headers apply; the
 * mid-stream ones do not (the request is recorded with no fault). A missing query or a passages
 * field that is not a list of texts → 400.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { checkModel, finishTimeline, type HandlerContext, serveRequest } from './handler.js';
import { parseJsonObject, RequestError } from './request-parse.js';
import { embeddingOf } from './routes-embeddings.js';

/** The rerank APIs the simulator speaks. */
export type RankingsApi = 'tei' | 'cohere' | 'nim';

/** A parsed rerank request. */
interface RankingsRequest {
  model: string;
  query: string;
  passages: string[];
}

function invalid(message: string, param: string): RequestError {
  return new RequestError(400, message, param, 'invalid_request_error');
}

function textsOf(value: unknown, param: string, wrapped: boolean): string[] {
  if (!Array.isArray(value)) throw invalid(`'${param}' must be a list`, param);
  return value.map((item) => {
    const text = wrapped ? (item as { text?: unknown } | null)?.text : item;
    if (typeof text !== 'string') throw invalid(`'${param}' must hold texts`, param);
    return text;
  });
}

/** @throws {RequestError} 400 for a missing query or bad passages, 404 for an unknown model. */
function parseRankingsRequest(ctx: HandlerContext, api: RankingsApi, raw: string): RankingsRequest {
  const body = parseJsonObject(raw);
  const model = typeof body.model === 'string' ? body.model : '';
  if (api !== 'tei') checkModel(ctx, { model });
  const query = api === 'nim' ? (body.query as { text?: unknown } | null)?.text : body.query;
  if (typeof query !== 'string') throw invalid("'query' must be a text", 'query');
  const passages =
    api === 'tei'
      ? textsOf(body.texts, 'texts', false)
      : api === 'cohere'
        ? textsOf(body.documents, 'documents', false)
        : textsOf(body.passages, 'passages', true);
  return { model, query, passages };
}

/** The answer body of `api` for passages scored `scores`, best first. */
function answerBody(api: RankingsApi, t: RequestTimeline, req: RankingsRequest, tokens: number): unknown {
  const ranked = req.passages
    .map((text, index) => ({ index, text, score: embeddingOf(`${req.query}\n${text}`)[0] ?? 0 }))
    .sort((a, b) => b.score - a.score);
  if (api === 'tei') return ranked.map(({ index, score }) => ({ index, score }));
  if (api === 'nim') return { rankings: ranked.map(({ index, score }) => ({ index, logit: score })) };
  return {
    id: t.id,
    model: req.model,
    usage: { total_tokens: tokens },
    results: ranked.map(({ index, text, score }) => ({ index, document: { text }, relevance_score: score })),
  };
}

async function answer(
  ctx: HandlerContext,
  api: RankingsApi,
  res: ServerResponse,
  req: RankingsRequest,
  fault: Fault,
  t: RequestTimeline,
): Promise<void> {
  const queryTokens = ctx.tokenizer.encode(req.query).length;
  let tokens = 0;
  for (const passage of req.passages) tokens += queryTokens + ctx.tokenizer.encode(passage).length;
  if (req.passages.length === 0) tokens = queryTokens;
  t.promptTokens = tokens;
  ctx.counters.promptTokens += tokens;
  const extraMs = fault.kind === 'slow-headers' ? fault.delayMs : 0;
  await new Promise((r) =>
    setTimeout(r, ctx.opts.ttftMs + ctx.opts.ttftPerUncachedTokenMs * tokens + extraMs),
  );
  if (res.destroyed) return;
  const body = JSON.stringify(answerBody(api, t, req, tokens));
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
  t.firstTokenWriteNs = monotonicNowNs();
  t.chunkWriteNs.push(t.firstTokenWriteNs);
  t.status = 200;
  t.endNs = t.firstTokenWriteNs;
  finishTimeline(ctx, t);
}

/** Serves one rerank POST of `api`. Never throws. */
export function handleRankings(
  ctx: HandlerContext,
  api: RankingsApi,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return serveRequest(
    ctx,
    {
      endpoint: `rankings-${api}`,
      earlyFaultsOnly: true,
      parse: (raw) => parseRankingsRequest(ctx, api, raw),
      serve: (parsed, fault, t) => answer(ctx, api, res, parsed, fault, t),
    },
    req,
    res,
  );
}
