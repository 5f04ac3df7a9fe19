/**
 * Simulator route `POST /v1/responses` (OpenAI API reference, "Responses" and "Streaming events"):
 * `{model, input, instructions?, stream, max_output_tokens}` in; out, when streamed,
 * `response.created`, then `response.reasoning_text.delta` / `response.output_text.delta` events
 * (text in `delta`), then `response.completed` carrying the whole response with `usage`
 * (`input_tokens`, `output_tokens`, details); a simulated in-band error is an `error` event.
 * Not streamed: one `response` object with the text in `output[].content[].text`.
 * Prompt text: `instructions` and every input item's text, joined with one space.
 * Faults: besides status, hang and slow-headers, only a stream's after-N-tokens ones apply.
 */
import { parseJsonObject, positiveIntField, RequestError } from './request-parse.js';
import type { UsageBody } from './responses.js';
import type { GenerateRoute } from './routes-generate.js';
import {
  type RouteMeta,
  type RouteRequest,
  SSE_HEADERS,
  sseFrame,
  type WireFormat,
  type WireOutput,
} from './wire-format.js';

function itemText(item: unknown): string {
  if (typeof item === 'string') return item;
  if (item === null || typeof item !== 'object') return '';
  const content = (item as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content) {
    const text = (part as { text?: unknown } | null)?.text;
    if (typeof text === 'string') parts.push(text);
  }
  return parts.join(' ');
}

function promptOf(body: Record<string, unknown>): string {
  const input = body.input;
  const texts = typeof body.instructions === 'string' ? [body.instructions] : [];
  if (typeof input === 'string') texts.push(input);
  else if (Array.isArray(input) && input.length > 0) texts.push(...input.map(itemText));
  else
    throw new RequestError(
      400,
      "'input' must be a string or a non-empty array",
      'input',
      'invalid_request_error',
    );
  return texts.join(' ');
}

function parseResponsesRequest(raw: string, defaultMaxTokens: number): RouteRequest {
  const body = parseJsonObject(raw);
  return {
    model: typeof body.model === 'string' ? body.model : '',
    stream: body.stream === true,
    maxTokens: positiveIntField(body, 'max_output_tokens') ?? defaultMaxTokens,
    prompt: { text: promptOf(body) },
  };
}

function usageOf(u: UsageBody): Record<string, unknown> {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details.cached_tokens },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.total_tokens,
  };
}

function responseObject(meta: RouteMeta, status: string, end: WireOutput | null): Record<string, unknown> {
  const output: unknown[] = [];
  if (end !== null && end.reasoning !== '') {
    output.push({
      type: 'reasoning',
      id: `rs_${meta.id}`,
      summary: [],
      content: [{ type: 'reasoning_text', text: end.reasoning }],
    });
  }
  if (end !== null) {
    output.push({
      type: 'message',
      id: `msg_${meta.id}`,
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: end.text, annotations: [] }],
    });
  }
  return {
    id: `resp_${meta.id}`,
    object: 'response',
    created_at: meta.created,
    status,
    error: null,
    model: meta.model,
    output,
    usage: end === null ? null : usageOf(end.usage),
  };
}

/** Responses API wire shapes of one response. */
function responsesFormat(_req: RouteRequest, meta: RouteMeta): WireFormat {
  return {
    streamHeaders: SSE_HEADERS,
    start: () =>
      sseFrame(
        { type: 'response.created', response: responseObject(meta, 'in_progress', null) },
        'response.created',
      ),
    delta: (piece) => {
      const type = piece.reasoning ? 'response.reasoning_text.delta' : 'response.output_text.delta';
      const itemId = piece.reasoning ? `rs_${meta.id}` : `msg_${meta.id}`;
      return sseFrame({ type, item_id: itemId, output_index: 0, content_index: 0, delta: piece.text }, type);
    },
    end: (output) =>
      sseFrame(
        { type: 'response.completed', response: responseObject(meta, 'completed', output) },
        'response.completed',
      ),
    error: () =>
      sseFrame(
        { type: 'error', code: 'server_error', message: 'simulated in-band error', param: null },
        'error',
      ),
    done: '',
    body: (output) => responseObject(meta, 'completed', output),
  };
}

/** The `POST /v1/responses` route. */
export const RESPONSES_ROUTE: GenerateRoute = {
  endpoint: 'responses',
  parse: parseResponsesRequest,
  format: responsesFormat,
  streamFaultsOnly: true,
};
