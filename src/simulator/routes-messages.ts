/**
 * Simulator route `POST /v1/messages` (Anthropic API reference, "Messages" and "Streaming
 * Messages"): `{model, messages, max_tokens, system?, stream}` in (`max_tokens` required, else 400
 * as the API answers). Streamed, with an `event:` line naming each event: `message_start` (the
 * message with empty `content` and `usage.input_tokens`), `ping`, then per content block
 * `content_block_start`, its `content_block_delta` events (`thinking_delta` for the reasoning
 * tokens, then `text_delta`), `content_block_stop`; then `message_delta` (`stop_reason:
 * "max_tokens"`, the whole usage) and `message_stop`. There is no `[DONE]`. `message_start` goes out
 * with the first output token, when the prompt's cached tokens are known. A simulated in-band error
 * is an `error` event (`{type:"error", error:{type:"api_error", message}}`). Not streamed: one
 * `{type:"message", content:[thinking?, text], stop_reason, usage}` body.
 * Prompt text: `system` (a string or text blocks) and every message's text, joined with one space,
 * as chat prompts are (or wrapped by the `chatTemplate` option with `system` as a system message).
 * Usage: `input_tokens` = prompt − cached, `cache_read_input_tokens` = cached,
 * `cache_creation_input_tokens` = 0, `output_tokens`. Faults: besides status, hang and
 * slow-headers, only a stream's after-N-tokens ones apply.
 */
import { applyChatTemplate, type TemplateMessage } from './chat-template.js';
import { parseJsonObject, positiveIntField, RequestError } from './request-parse.js';
import type { UsageBody } from './responses.js';
import type { GenerateRoute } from './routes-generate.js';
import { messageText } from './routes-openai.js';
import {
  type RouteMeta,
  type RouteRequest,
  SSE_HEADERS,
  sseFrame,
  type WireFormat,
  type WireOutput,
} from './wire-format.js';

function invalid(message: string, param: string): RequestError {
  return new RequestError(400, message, param, 'invalid_request_error');
}

/** The request's messages as the template sees them, `system` first when given. */
function promptMessages(body: Record<string, unknown>): TemplateMessage[] {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw invalid("'messages' must be a non-empty array", 'messages');
  }
  const out: TemplateMessage[] = [];
  const system = messageText(body.system);
  if (system !== '') out.push({ role: 'system', text: system });
  for (const m of messages) {
    if (m === null || typeof m !== 'object') throw invalid('each message must be an object', 'messages');
    const { role, content } = m as { role?: unknown; content?: unknown };
    out.push({ role: typeof role === 'string' ? role : 'user', text: messageText(content) });
  }
  return out;
}

function parseMessagesRequest(raw: string): RouteRequest {
  const body = parseJsonObject(raw);
  const maxTokens = positiveIntField(body, 'max_tokens');
  if (maxTokens === undefined) throw invalid('max_tokens: Field required', 'max_tokens');
  const messages = promptMessages(body);
  return {
    model: typeof body.model === 'string' ? body.model : '',
    stream: body.stream === true,
    maxTokens,
    prompt: { text: applyChatTemplate('none', messages), messages },
  };
}

/** Anthropic `usage` of an output snapshot. */
function usageOf(u: UsageBody): Record<string, number> {
  const cached = u.prompt_tokens_details.cached_tokens;
  return {
    input_tokens: u.prompt_tokens - cached,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
    output_tokens: u.completion_tokens,
  };
}

function contentOf(output: WireOutput | null): unknown[] {
  if (output === null) return [];
  const blocks: unknown[] = [];
  if (output.reasoning !== '') blocks.push({ type: 'thinking', thinking: output.reasoning, signature: '' });
  blocks.push({ type: 'text', text: output.text });
  return blocks;
}

function messageObject(meta: RouteMeta, usage: UsageBody, end: WireOutput | null): Record<string, unknown> {
  return {
    id: `msg_${meta.id}`,
    type: 'message',
    role: 'assistant',
    model: meta.model,
    content: contentOf(end),
    stop_reason: end === null ? null : 'max_tokens',
    stop_sequence: null,
    usage: usageOf(usage),
  };
}

function frame(data: Record<string, unknown>): string {
  return sseFrame(data, data.type as string);
}

/** The frames that open a content block of `kind` at `index`. */
function blockStart(index: number, kind: 'thinking' | 'text'): string {
  const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '' };
  return frame({ type: 'content_block_start', index, content_block: block });
}

/** Messages API wire shapes of one response; tracks the open content block. */
function messagesFormat(_req: RouteRequest, meta: RouteMeta): WireFormat {
  let open: 'thinking' | 'text' | null = null;
  let index = -1;
  return {
    streamHeaders: SSE_HEADERS,
    start: () => '',
    delta: (piece) => {
      let out = '';
      const kind = piece.reasoning ? 'thinking' : 'text';
      if (index < 0) {
        // The first output token: the prompt's usage (cached tokens included) is known now.
        const startUsage = { ...piece.upTo.usage, completion_tokens: 1 };
        out += frame({ type: 'message_start', message: messageObject(meta, startUsage, null) });
        out += frame({ type: 'ping' });
      }
      if (open !== kind) {
        if (open !== null) out += frame({ type: 'content_block_stop', index });
        index++;
        open = kind;
        out += blockStart(index, kind);
      }
      const delta =
        kind === 'text'
          ? { type: 'text_delta', text: piece.text }
          : { type: 'thinking_delta', thinking: piece.text };
      return out + frame({ type: 'content_block_delta', index, delta });
    },
    end: (output) =>
      (open === null ? '' : frame({ type: 'content_block_stop', index })) +
      frame({
        type: 'message_delta',
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: usageOf(output.usage),
      }) +
      frame({ type: 'message_stop' }),
    error: () => frame({ type: 'error', error: { type: 'api_error', message: 'simulated in-band error' } }),
    done: '',
    body: (output) => messageObject(meta, output.usage, output),
  };
}

/** The `POST /v1/messages` route. */
export const MESSAGES_ROUTE: GenerateRoute = {
  endpoint: 'messages',
  parse: (raw) => parseMessagesRequest(raw),
  format: messagesFormat,
  streamFaultsOnly: true,
};
