/**
 * The simulator's answer to a JSON body of an API it does not know, posted to any path outside
 * `/v1/` and without `/v1/` anywhere in it (`/custom-endpoint`, `/embed`, `/analyze`; a known path
 * behind a wrong prefix stays a 404), and to `POST /generate`
 * when the body is not TGI's (no string `inputs`): what the `template` endpoint type sends
 * (endpoint/template.ts). No field is required; the body is read as:
 * - prompt: every string in the body (at any depth) but its top-level `model`, joined by newlines;
 * - output length: the first positive integer of `max_tokens`, `max_new_tokens`,
 *   `max_completion_tokens`, `max_output_tokens` (top level, then under `parameters`), else the
 *   `defaultMaxTokens` option;
 * - `stream: true` streams; `model` is echoed (no configured-model check: the API may name none).
 * A path naming `embed` (any case) is answered as an embedding service, after the prompt's delay:
 * `{embeddings: [vector per string], model, usage}`. Any other path generates, through the shared
 * generation pipeline, with the text under both `text` (which auto-detection reads) and
 * `generated_text` (TGI's name): not streamed, `{id, model, text, generated_text, finish_reason,
 * usage}`; streamed, one SSE event `{id, text, generated_text}` per chunk, the last with
 * `finish_reason: "length"`, then `data: [DONE]`. Faults: status, hang, slow-headers, and a
 * stream's after-N-tokens ones.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type HandlerContext, serveRequest } from './handler.js';
import { parseJsonObject, positiveIntField } from './request-parse.js';
import { answerAfterDelay, type EmbeddingAnswer, vectorOf } from './routes-embeddings.js';
import { type GenerateRoute, handleRoute } from './routes-generate.js';
import { type RouteMeta, type RouteRequest, SSE_HEADERS, sseFrame, type WireFormat } from './wire-format.js';

/** A request parsed by this route (marked, so a route it stands behind can tell its own apart). */
interface AnyRequest extends RouteRequest {
  anyJson: true;
}

/** The output-length fields tried, in order. */
const MAX_TOKEN_KEYS = ['max_tokens', 'max_new_tokens', 'max_completion_tokens', 'max_output_tokens'];

/** Every string in `value`, depth first, skipping the top-level `model`. */
function stringsOf(value: unknown, out: string[], top: boolean): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const item of value) stringsOf(item, out, false);
  else if (value !== null && typeof value === 'object')
    for (const [key, item] of Object.entries(value))
      if (!(top && key === 'model')) stringsOf(item, out, false);
  return out;
}

/** The body's output length, or undefined. @throws {RequestError} 400 for a bad length field. */
function maxTokensOf(body: Record<string, unknown>): number | undefined {
  const params = body.parameters;
  const nested =
    params !== null && typeof params === 'object' && !Array.isArray(params)
      ? (params as Record<string, unknown>)
      : {};
  for (const where of [body, nested])
    for (const key of MAX_TOKEN_KEYS) {
      const value = positiveIntField(where, key);
      if (value !== undefined) return value;
    }
  return undefined;
}

/** @throws {RequestError} 400 when the body is not a JSON object or a length field is bad. */
function parseAnyRequest(body: Record<string, unknown>, defaultMaxTokens: number): AnyRequest {
  return {
    anyJson: true,
    model: typeof body.model === 'string' ? body.model : '',
    stream: body.stream === true,
    maxTokens: maxTokensOf(body) ?? defaultMaxTokens,
    prompt: { text: stringsOf(body, [], true).join('\n') },
  };
}

/** The wire shapes of one generated answer. */
function anyFormat(meta: RouteMeta): WireFormat {
  return {
    streamHeaders: SSE_HEADERS,
    start: () => '',
    delta: (piece) =>
      sseFrame({
        id: meta.id,
        text: piece.text,
        generated_text: piece.text,
        ...(piece.last ? { finish_reason: 'length' } : {}),
      }),
    end: () => '',
    error: () => sseFrame({ error: { message: 'simulated in-band error', type: 'server_error', code: 500 } }),
    done: 'data: [DONE]\n\n',
    body: (output) => {
      const text = output.reasoning + output.text;
      return {
        id: meta.id,
        model: meta.model,
        text,
        generated_text: text,
        finish_reason: 'length',
        usage: output.usage,
      };
    },
  };
}

const isAny = (req: RouteRequest): req is AnyRequest => (req as Partial<AnyRequest>).anyJson === true;

/** The generation route of an unknown API's bodies. */
const ANY_GENERATE_ROUTE: GenerateRoute<AnyRequest> = {
  endpoint: 'any',
  parse: (raw, max) => parseAnyRequest(parseJsonObject(raw), max),
  format: (_req, meta) => anyFormat(meta),
  modelless: true,
  streamFaultsOnly: true,
};

/**
 * `route` (TGI's `POST /generate`) for the bodies it takes (a string `inputs`), this route for any
 * other JSON body.
 */
export function orAnyJson(route: GenerateRoute): GenerateRoute {
  return {
    endpoint: route.endpoint,
    parse: (raw, max) => {
      const body = parseJsonObject(raw);
      return typeof body.inputs === 'string' ? route.parse(raw, max) : parseAnyRequest(body, max);
    },
    format: (req, meta, options) => (isAny(req) ? anyFormat(meta) : route.format(req, meta, options)),
    modelless: true,
    streamFaultsOnly: true,
  };
}

/** The embedding answer of a body: one vector per string in it. */
function embeddingAnswer(body: Record<string, unknown>): EmbeddingAnswer {
  const model = typeof body.model === 'string' ? body.model : '';
  const inputs = stringsOf(body, [], true).map((text) => ({ text }));
  return {
    inputs,
    body: (promptTokens) => ({
      embeddings: inputs.map(vectorOf),
      model,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
    }),
  };
}

/** Serves one POST of an unknown API's JSON body to `path` (see the module comment). Never throws. */
export function handleAnyJson(
  ctx: HandlerContext,
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!/embed/i.test(path)) return handleRoute(ctx, ANY_GENERATE_ROUTE, req, res);
  return serveRequest(
    ctx,
    {
      endpoint: 'any_embeddings',
      earlyFaultsOnly: true,
      parse: (raw) => embeddingAnswer(parseJsonObject(raw)),
      serve: (answer, fault, t) => answerAfterDelay(ctx, res, answer, fault, t),
    },
    req,
    res,
  );
}
