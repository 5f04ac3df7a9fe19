/**
 * OpenAI legacy Completions (`POST /v1/completions`), per AIPerf's completions endpoint (AIPerf
 * reference, "Endpoint types and wire formats"): text sits in `choices[*].text`, streamed or not.
 */
import { type ChatMessage, contentText } from '../dataset/types.js';
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

/** The prompt string: the single message's content, or all contents joined with a blank line. */
export function promptOf(messages: readonly ChatMessage[]): string {
  if (messages.length === 1) return contentText(messages[0]?.content ?? null) ?? '';
  return messages.map((message) => contentText(message.content) ?? '').join('\n\n');
}

/**
 * Builds `{model, prompt, stream, max_tokens}` (and `include_metrics: true` with `--server-timing`),
 * then shallow-merges `extraInputs`, then `turnExtra`,
 * then (streaming only) sets `stream_options` like the chat endpoint.
 */
function buildCompletionsBody(input: BodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: input.model,
    prompt: promptOf(input.messages),
    stream: input.stream,
  };
  if (input.maxTokens !== undefined) body.max_tokens = input.maxTokens;
  askServerTiming(body, input);
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  if (input.stream) body.stream_options = streamOptionsFor(body.stream_options, input.perChunkUsage);
  return body;
}

/** Parses one completions payload (`text_completion`). Empty or null `text` is not text. */
function parseCompletions(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  parsed.usage = usageOf(body);
  noteServerTiming(parsed, body);
  choicesOf(body).forEach((choice, position) => {
    noteChoice(parsed, choice, position);
    parsed.text += asText(choice.text);
  });
  return parsed;
}

/** The `completions` endpoint adapter. */
export const completions: EndpointAdapter = {
  name: 'completions',
  defaultPath: '/v1/completions',
  streamable: true,
  generatesTokens: true,
  chatTemplated: false,
  asksServerTiming: true,
  buildBody: buildCompletionsBody,
  parse: (json) => parseCompletions(json),
  parseBytes: (bytes, start, end, scratch) => scanChoices(bytes, start, end, 'completions', scratch),
};
