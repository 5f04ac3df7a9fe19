/**
 * Simulator routes of Hugging Face Text Generation Inference (TGI docs, "API reference"):
 * `POST /generate` and `POST /generate_stream`, body `{inputs, parameters:{max_new_tokens, details}}`
 * (no model field: the configured-model check is skipped). Streamed: one
 * `data:{index, token:{id, text, logprob, special:false}, generated_text:null, details:null}` event
 * per chunk; the last one also has `generated_text` and `details` (`finish_reason: "length"`,
 * `generated_tokens`, `input_length`); no `[DONE]`. Not streamed: `{generated_text, details}`.
 * A simulated in-band error is `data:{"error":…,"error_type":"generation"}`.
 */
import { RequestError } from './request-parse.js';
import { type GenerateRoute, parseJsonObject, positiveIntField } from './routes-generate.js';
import { type RouteRequest, sseFrame, type WireEnd, type WireFormat } from './routes-writer.js';

function parseTgiRequest(stream: boolean, raw: string, defaultMaxTokens: number): RouteRequest {
  const body = parseJsonObject(raw);
  if (typeof body.inputs !== 'string') {
    throw new RequestError(400, "'inputs' must be a string", 'inputs', 'validation');
  }
  const params = body.parameters;
  const parameters =
    params !== null && typeof params === 'object' && !Array.isArray(params)
      ? (params as Record<string, unknown>)
      : {};
  return {
    model: typeof body.model === 'string' ? body.model : '',
    stream,
    maxTokens: positiveIntField(parameters, 'max_new_tokens') ?? defaultMaxTokens,
    promptText: body.inputs,
  };
}

function details(end: WireEnd): Record<string, unknown> {
  return {
    finish_reason: 'length',
    generated_tokens: end.usage.completion_tokens,
    input_length: end.usage.prompt_tokens,
    seed: null,
  };
}

/** TGI wire shapes. */
export const TGI_FORMAT: WireFormat = {
  start: () => [],
  delta: (_meta, piece) => {
    const event = {
      index: piece.sentTokens - 1,
      token: { id: piece.sentTokens - 1, text: piece.text, logprob: -0.1, special: false },
      generated_text: piece.end === undefined ? null : piece.end.reasoning + piece.end.text,
      details: piece.end === undefined ? null : details(piece.end),
    };
    return [sseFrame(event)];
  },
  end: () => [],
  error: () => [sseFrame({ error: 'simulated in-band error', error_type: 'generation' })],
  body: (_meta, end) => ({ generated_text: end.reasoning + end.text, details: details(end) }),
};

/** `POST /generate` (one JSON body). */
export const TGI_GENERATE_ROUTE: GenerateRoute = {
  endpoint: 'generate',
  parse: (raw, max) => parseTgiRequest(false, raw, max),
  format: TGI_FORMAT,
  modelless: true,
};

/** `POST /generate_stream` (SSE). */
export const TGI_STREAM_ROUTE: GenerateRoute = {
  endpoint: 'generate_stream',
  parse: (raw, max) => parseTgiRequest(true, raw, max),
  format: TGI_FORMAT,
  modelless: true,
};
