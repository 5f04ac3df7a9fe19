/**
 * Anthropic Messages API (`POST /v1/messages`), as AIPerf's `messages` endpoint type sends and reads
 * it (AIPerf docs, tutorials/anthropic-messages-endpoint.md; Anthropic API reference, "Messages" and
 * "Streaming Messages").
 * - Body: `{model, messages, max_tokens, stream}`; system messages go to the top-level `system`
 *   string, never into `messages`; `max_tokens` is required by the API, so it is always sent.
 * - Streamed: typed SSE events, each with its `type` in the data. `message_start` carries
 *   `message.usage` (input tokens), `content_block_delta` a `text_delta` (content) or
 *   `thinking_delta` (reasoning), `message_delta` the output-token usage and `delta.stop_reason`,
 *   `message_stop` ends the stream (there is no `[DONE]`); `ping`, `content_block_start`/`stop` carry
 *   nothing read. An `error` event (`{type:"error", error:{type, message}}`) fails the request.
 * - Not streamed: `{type:"message", content:[{type:"text"|"thinking"|"tool_use", …}], stop_reason, usage}`.
 * - Usage `{input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens}` is
 *   read as `prompt_tokens` = input + cache read + cache creation (Anthropic's `input_tokens` leaves
 *   the cached ones out), `cached_tokens` = cache read, `completion_tokens` = output.
 * - Headers: `x-api-key: <--api-key>` instead of `Authorization: Bearer`, and
 *   `anthropic-version: 2023-06-01` unless `-H` gives one.
 */
import type { ChatMessage } from '../dataset/types.js';
import type { Usage } from '../record/types.js';
import { asObject, asText, emptyParse } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/**
 * `max_tokens` sent when the turn asks for no output length: 1024, the default AIPerf's messages
 * tutorial states (the Messages API rejects a request without `max_tokens`).
 */
export const MESSAGES_DEFAULT_MAX_TOKENS = 1024;

/** The `anthropic-version` header value sent unless `-H` overrides it (AIPerf's default). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** The system messages' texts joined by a blank line, and the other messages as they are. */
function splitSystem(messages: readonly ChatMessage[]): { system: string | null; rest: ChatMessage[] } {
  const system: string[] = [];
  const rest: ChatMessage[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      if (typeof message.content === 'string') system.push(message.content);
    } else {
      rest.push({ role: message.role, content: message.content });
    }
  }
  return { system: system.length === 0 ? null : system.join('\n\n'), rest };
}

/**
 * Builds `{model, messages, max_tokens, stream, system?}` (`max_tokens` = `maxTokens`, else
 * {@link MESSAGES_DEFAULT_MAX_TOKENS}; `system` only when a system message was given), then
 * shallow-merges `extraInputs`, then `turnExtra`. `useLegacyMaxTokens` and `perChunkUsage` do not
 * apply (the API has one length field and always streams usage).
 */
function buildMessagesBody(input: BodyInput): Record<string, unknown> {
  const { system, rest } = splitSystem(input.messages);
  const body: Record<string, unknown> = {
    model: input.model,
    messages: rest,
    max_tokens: input.maxTokens ?? MESSAGES_DEFAULT_MAX_TOKENS,
    stream: input.stream,
  };
  if (system !== null) body.system = system;
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** An Anthropic `usage` object as OpenAI-shaped {@link Usage}; null when it counts nothing. */
export function anthropicUsage(value: unknown): Usage | null {
  const usage = asObject(value);
  if (usage === null) return null;
  const usage_: Usage = {};
  const cacheRead = count(usage.cache_read_input_tokens);
  if (typeof usage.input_tokens === 'number') {
    usage_.prompt_tokens = usage.input_tokens + cacheRead + count(usage.cache_creation_input_tokens);
    // No cache_read_input_tokens is an unknown cache hit, not a miss: no cached_tokens then.
    if (typeof usage.cache_read_input_tokens === 'number')
      usage_.prompt_tokens_details = { cached_tokens: cacheRead };
  }
  if (typeof usage.output_tokens === 'number') usage_.completion_tokens = usage.output_tokens;
  return Object.keys(usage_).length === 0 ? null : usage_;
}

/** The error of an `{type:"error", error:{type, message}}` payload. */
function errorOf(body: Record<string, unknown>): ParsedResponse['error'] {
  if (body.type !== 'error' && body.error === undefined) return null;
  const error = asObject(body.error);
  const message = asText(error?.message) || asText(body.error) || 'error';
  return { message, code: null, type: asText(error?.type) || null };
}

/** Text and reasoning of a whole message's `content` blocks (tool calls count as text). */
function applyContentBlocks(parsed: ParsedResponse, content: unknown): void {
  if (!Array.isArray(content)) return;
  for (const item of content) {
    const block = asObject(item);
    if (block === null) continue;
    if (block.type === 'text') parsed.text += asText(block.text);
    else if (block.type === 'thinking') parsed.reasoning += asText(block.thinking);
    else if (block.type === 'tool_use') {
      parsed.text += asText(block.name);
      if (block.input !== undefined && block.input !== null) parsed.text += JSON.stringify(block.input);
    }
  }
}

/** One streamed event's contribution. */
function applyEvent(parsed: ParsedResponse, body: Record<string, unknown>): void {
  switch (body.type) {
    case 'content_block_delta': {
      const delta = asObject(body.delta);
      if (delta?.type === 'text_delta') parsed.text = asText(delta.text);
      else if (delta?.type === 'thinking_delta') parsed.reasoning = asText(delta.thinking);
      else if (delta?.type === 'input_json_delta') parsed.text = asText(delta.partial_json);
      return;
    }
    case 'message_start':
      parsed.usage = anthropicUsage(asObject(body.message)?.usage);
      parsed.usageMerges = true;
      return;
    case 'message_delta':
      parsed.usage = anthropicUsage(body.usage);
      parsed.usageMerges = true;
      parsed.finishReason = asText(asObject(body.delta)?.stop_reason) || null;
      return;
    case 'message_stop':
      parsed.streamEnd = true;
      return;
    default:
      return;
  }
}

/** Parses one Messages payload (a streamed event, or a whole `type: "message"` body). Never throws. */
function parseMessages(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = errorOf(body);
  if (parsed.error !== null) return parsed;
  if (body.type === 'message') {
    applyContentBlocks(parsed, body.content);
    parsed.usage = anthropicUsage(body.usage);
    parsed.finishReason = asText(body.stop_reason) || null;
    return parsed;
  }
  applyEvent(parsed, body);
  return parsed;
}

/** The `messages` endpoint adapter (Anthropic Messages API). */
export const messages: EndpointAdapter = {
  name: 'messages',
  defaultPath: '/v1/messages',
  streamable: true,
  generatesTokens: true,
  chatTemplated: true,
  defaultHeaders: { 'anthropic-version': ANTHROPIC_VERSION },
  authHeaders: (apiKey) => ({ 'x-api-key': apiKey }),
  buildBody: buildMessagesBody,
  parse: (json) => parseMessages(json),
};
