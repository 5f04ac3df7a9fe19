/**
 * Simulator routes of Hugging Face Text Generation Inference (TGI docs, "API reference"):
 * `POST /generate` and `POST /generate_stream`, body `{inputs, parameters:{max_new_tokens, details}}`
 * (no model field: the configured-model check is skipped). Streamed: one
 * `data:{index, token:{id, text, logprob, special:false}, generated_text:null, details:null}` event
 * per chunk; the last one also has `generated_text` and `details` (`finish_reason: "length"`,
 * `generated_tokens`, `input_length`); no `[DONE]`. Not streamed: `{generated_text, details}`.
 * A simulated in-band error is `data:{"error":…,"error_type":"generation"}`. Faults: besides
 * status, hang and slow-headers, only a stream's after-N-tokens ones apply.
 */
import { parseJsonObject, positiveIntField, RequestError } from './request-parse.js';
import type { GenerateRoute } from './routes-generate.js';
import { type RouteRequest, SSE_HEADERS, sseFrame, type WireFormat, type WireOutput } from './wire-format.js';

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
    prompt: { text: body.inputs },
  };
}

function details(end: WireOutput): Record<string, unknown> {
  return {
    finish_reason: 'length',
    generated_tokens: end.usage.completion_tokens,
    input_length: end.usage.prompt_tokens,
    seed: null,
  };
}

/** TGI wire shapes (the same for every response). */
const TGI_FORMAT: WireFormat = {
  streamHeaders: SSE_HEADERS,
  start: () => '',
  delta: (piece) => {
    const sent = piece.upTo.tokens;
    const end = piece.last ? piece.upTo : null;
    const event = {
      index: sent - 1,
      token: { id: sent - 1, text: piece.text, logprob: -0.1, special: false },
      generated_text: end === null ? null : end.reasoning + end.text,
      details: end === null ? null : details(end),
    };
    return sseFrame(event);
  },
  end: () => '',
  error: () => sseFrame({ error: 'simulated in-band error', error_type: 'generation' }),
  done: '',
  body: (output) => ({ generated_text: output.reasoning + output.text, details: details(output) }),
};

function tgiRoute(endpoint: string, stream: boolean): GenerateRoute {
  return {
    endpoint,
    parse: (raw, max) => parseTgiRequest(stream, raw, max),
    format: () => TGI_FORMAT,
    modelless: true,
    streamFaultsOnly: true,
  };
}

/** `POST /generate` (one JSON body). */
export const TGI_GENERATE_ROUTE: GenerateRoute = tgiRoute('generate', false);

/** `POST /generate_stream` (SSE). */
export const TGI_STREAM_ROUTE: GenerateRoute = tgiRoute('generate_stream', true);
