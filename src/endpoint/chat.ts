/**
 * OpenAI Chat Completions (`POST /v1/chat/completions`). Body and parsing follow AIPerf's chat
 * endpoint (AIPerf reference, "Endpoint types and wire formats"): a streamed event is a
 * `chat.completion.chunk` whose text sits in `choices[*].delta`; a whole body is a
 * `chat.completion` whose text sits in `choices[*].message`.
 */

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

/** Tool-call function names and arguments of a delta/message, concatenated (they count as text). */
function toolCallText(message: Record<string, unknown>): string {
  const calls = message.tool_calls;
  if (!Array.isArray(calls)) return '';
  let out = '';
  for (const call of calls) {
    const fn = asObject(asObject(call)?.function);
    if (fn !== null) out += asText(fn.name) + asText(fn.arguments);
  }
  return out;
}

function messageOf(choice: Record<string, unknown>, object: unknown): Record<string, unknown> | null {
  if (object === 'chat.completion.chunk') return asObject(choice.delta);
  if (object === 'chat.completion') return asObject(choice.message);
  return asObject(choice.delta) ?? asObject(choice.message);
}

/**
 * Parses one chat payload. Empty strings and null are not text; whitespace is. `choices` may be
 * `[]`, null or absent and `usage` may be null.
 */
function parseChat(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  parsed.usage = usageOf(body);
  noteServerTiming(parsed, body);
  choicesOf(body).forEach((choice, position) => {
    noteChoice(parsed, choice, position);
    const message = messageOf(choice, body.object);
    if (message === null) return;
    parsed.text += asText(message.content) + toolCallText(message);
    parsed.reasoning += asText(message.reasoning_content) || asText(message.reasoning);
  });
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
