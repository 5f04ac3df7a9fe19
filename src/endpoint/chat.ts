/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`). Body and parsing follow AIPerf's chat
 * endpoint (AIPerf reference, "Endpoint types and wire formats"): a streamed event is a
 * `chat.completion.chunk` whose text sits in `choices[*].delta`; a whole body is a
 * `chat.completion` whose text sits in `choices[*].message`.
 */

import type { ToolCallPiece } from '../record/tool-calls.js';
import { scanChoices } from './choices-scan.js';
import {
  askServerTiming,
  asObject,
  asText,
  choicesOf,
  emptyParse,
  inBandError,
  noteChoice,
  noteServerTiming,
  usageOf,
} from './parse-common.js';
import { streamOptionsFor } from './stream-options.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/**
 * Builds `{model, messages, stream, max_completion_tokens | max_tokens}` (and `include_metrics: true`
 * with `--server-timing`), then shallow-merges `extraInputs`, then `turnExtra`, then (streaming only) sets `stream_options` with
 * `include_usage: true` (+ `continuous_usage_stats: true` for per-chunk usage), keeping existing keys.
 */
function buildChatBody(input: BodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: input.model,
    messages: input.messages,
    stream: input.stream,
  };
  if (input.maxTokens !== undefined) {
    body[input.useLegacyMaxTokens ? 'max_tokens' : 'max_completion_tokens'] = input.maxTokens;
  }
  askServerTiming(body, input);
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  if (input.stream) body.stream_options = streamOptionsFor(body.stream_options, input.perChunkUsage);
  return body;
}

/**
 * Tool-call function names and arguments of a delta/message, concatenated (they count as text, as
 * AIPerf counts them), a legacy `function_call`'s name and arguments last.
 */
function toolCallText(message: Record<string, unknown>): string {
  const calls = message.tool_calls;
  let out = '';
  if (Array.isArray(calls)) {
    for (const call of calls) {
      const fn = asObject(asObject(call)?.function);
      if (fn !== null) out += asText(fn.name) + asText(fn.arguments);
    }
  }
  const legacy = asObject(message.function_call);
  if (legacy !== null) out += asText(legacy.name) + asText(legacy.arguments);
  return out;
}

/**
 * A call's `arguments` as they join the history: the string (OpenAI's form), or the JSON text of an
 * object some servers send instead; '' when absent.
 */
function argumentsText(value: unknown): string {
  if (typeof value === 'string') return value;
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/**
 * The tool call pieces of a delta (`whole` false) or a whole answer's message (record/tool-calls.ts):
 * each `tool_calls` item, then a legacy `function_call` (streamed: call 0, its name concatenated;
 * whole: one more call). Empty when there are none.
 */
function toolCallPieces(message: Record<string, unknown>, whole: boolean): ToolCallPiece[] {
  const pieces: ToolCallPiece[] = [];
  const calls = message.tool_calls;
  if (Array.isArray(calls)) {
    for (const item of calls) {
      const call = asObject(item);
      if (call === null) continue;
      const fn = asObject(call.function);
      const index = typeof call.index === 'number' && Number.isInteger(call.index) ? call.index : undefined;
      pieces.push({
        index,
        id: asText(call.id),
        type: asText(call.type),
        name: asText(fn?.name),
        arguments: argumentsText(fn?.arguments),
      });
    }
  }
  const legacy = asObject(message.function_call);
  if (legacy !== null) {
    const piece: ToolCallPiece = {
      index: whole ? undefined : 0,
      id: '',
      type: 'function',
      name: asText(legacy.name),
      arguments: argumentsText(legacy.arguments),
    };
    if (!whole) piece.legacyName = true;
    pieces.push(piece);
  }
  return pieces;
}

/** A choice's delta (streamed) or message (whole answer), by the object type; null when it has neither. */
function messageOf(
  choice: Record<string, unknown>,
  object: unknown,
): { message: Record<string, unknown>; whole: boolean } | null {
  const delta = object === 'chat.completion' ? null : asObject(choice.delta);
  if (delta !== null) return { message: delta, whole: false };
  const message = object === 'chat.completion.chunk' ? null : asObject(choice.message);
  return message === null ? null : { message, whole: true };
}

/**
 * Parses one chat payload. Empty strings and null are not text; whitespace is. `choices` may be
 * `[]`, null or absent and `usage` may be null. The first choice's tool calls, when it has any, are
 * also given as pieces, with the payload's content text apart.
 */
function parseChat(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  parsed.usage = usageOf(body);
  noteServerTiming(parsed, body);
  let content = '';
  choicesOf(body).forEach((choice, position) => {
    noteChoice(parsed, choice, position);
    const found = messageOf(choice, body.object);
    if (found === null) return;
    const { message, whole } = found;
    const own = asText(message.content);
    content += own;
    parsed.text += own + toolCallText(message);
    parsed.reasoning += asText(message.reasoning_content) || asText(message.reasoning);
    if (position !== 0) return;
    const pieces = toolCallPieces(message, whole);
    if (pieces.length > 0) parsed.toolCalls = pieces;
  });
  if (parsed.toolCalls !== undefined) parsed.content = content;
  return parsed;
}

/** The `chat` endpoint adapter. */
export const chat: EndpointAdapter = {
  name: 'chat',
  defaultPath: '/v1/chat/completions',
  streamable: true,
  generatesTokens: true,
  chatTemplated: true,
  asksServerTiming: true,
  buildBody: buildChatBody,
  parse: (json) => parseChat(json),
  parseBytes: (bytes, start, end, scratch) => scanChoices(bytes, start, end, 'chat', scratch),
};
