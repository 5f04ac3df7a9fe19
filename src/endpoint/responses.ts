/**
 * OpenAI Responses API (`POST /v1/responses`), per the OpenAI API reference ("Responses" and
 * "Streaming events"). A stream is a sequence of typed events, each JSON object naming itself in
 * `type`:
 * - `response.output_text.delta` carries output text in `delta`, and
 *   `response.function_call_arguments.delta` a function call's arguments (output too, as a chat
 *   tool call's arguments are);
 * - `response.reasoning_text.delta` and `response.reasoning_summary_text.delta` carry reasoning;
 * - `response.completed` / `response.incomplete` end the stream and carry the full `response`
 *   (with `usage`); its text repeats the deltas and is not read again;
 * - `response.failed` (error in `response.error`) and `error` (`code`, `message`) are in-band errors;
 * - every other event (`response.created`, `response.output_item.added`, the `*.done` events, …) is
 *   structure and never a token.
 *
 * There is no `[DONE]` sentinel: a terminal event (`response.completed`, `response.incomplete`,
 * `response.failed`) ends the stream as `[DONE]` does (`streamEnd`), and sets `finishReason`
 * (`completed`, or the `incomplete_details.reason` such as `max_output_tokens`) or the error.
 * A non-streamed body is a `response` object: text in `output[].content[].text`, and a function
 * call's `name` and `arguments` in its `output[]` item (counted as output, as chat tool calls are).
 */
import type { ChatMessage } from '../dataset/types.js';
import type { Usage } from '../record/types.js';
import { asObject, asText, emptyParse, httpLikeCode, inBandError } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/**
 * One Responses input message (`EasyInputMessage`): role plus string content, or `input_text` parts
 * for a message whose content is an array of text parts.
 */
export interface ResponsesInputMessage {
  role: string;
  content: string | Array<{ type: 'input_text'; text: string }>;
}

/** The `input` list: each message's role and content (null content becomes ''; text parts become `input_text`). */
export function responsesInput(messages: readonly ChatMessage[]): ResponsesInputMessage[] {
  return messages.map((m) => ({
    role: m.role,
    content: Array.isArray(m.content)
      ? m.content.map((p) => ({ type: 'input_text' as const, text: p.text }))
      : (m.content ?? ''),
  }));
}

/**
 * The run's system prompt (`--system-prompt`) as the Responses API's top-level `instructions`, as
 * AIPerf sends it: taken out of the messages when it is their leading system message as it is; left
 * in place (null) when it was prepended to a dataset's own system message, which stays an input item.
 */
function instructionsOf(input: BodyInput): { instructions: string | null; messages: readonly ChatMessage[] } {
  const first = input.messages[0];
  if (input.systemPrompt === undefined || first?.role !== 'system' || first.content !== input.systemPrompt)
    return { instructions: null, messages: input.messages };
  return { instructions: input.systemPrompt, messages: input.messages.slice(1) };
}

/**
 * Builds `{model, input, stream, instructions?, max_output_tokens?}`, then shallow-merges
 * `extraInputs`, then `turnExtra`. No `stream_options`: the Responses API reports usage on
 * `response.completed` anyway.
 */
function buildResponsesBody(input: BodyInput): Record<string, unknown> {
  const { instructions, messages } = instructionsOf(input);
  const body: Record<string, unknown> = {
    model: input.model,
    input: responsesInput(messages),
    stream: input.stream,
  };
  if (instructions !== null) body.instructions = instructions;
  if (input.maxTokens !== undefined) body.max_output_tokens = input.maxTokens;
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Maps Responses `usage` (`input_tokens`, `output_tokens`, `total_tokens`,
 * `input_tokens_details.cached_tokens`, `output_tokens_details.reasoning_tokens`) to our chat-style
 * {@link Usage}; null when absent.
 */
export function responsesUsage(raw: unknown): Usage | null {
  const usage = asObject(raw);
  if (usage === null) return null;
  const out: Usage = {};
  const input = count(usage.input_tokens);
  const output = count(usage.output_tokens);
  const total = count(usage.total_tokens);
  if (input !== undefined) out.prompt_tokens = input;
  if (output !== undefined) out.completion_tokens = output;
  if (total !== undefined) out.total_tokens = total;
  const cached = count(asObject(usage.input_tokens_details)?.cached_tokens);
  if (cached !== undefined) out.prompt_tokens_details = { cached_tokens: cached };
  const reasoning = count(asObject(usage.output_tokens_details)?.reasoning_tokens);
  if (reasoning !== undefined) out.completion_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

function errorOf(raw: unknown, fallback: string): ParsedResponse['error'] {
  const error = asObject(raw);
  const code = asText(error?.code) || null;
  return {
    message: asText(error?.message) || fallback,
    code: httpLikeCode(error?.code),
    type: code,
  };
}

/** Status of a finished `response` object: `completed`, the incomplete reason, or null. */
function finishOf(response: Record<string, unknown>): string | null {
  const status = asText(response.status);
  if (status === 'incomplete') return asText(asObject(response.incomplete_details)?.reason) || 'incomplete';
  return status === 'completed' ? 'completed' : null;
}

/** Applies a whole `response` object (terminal event or non-streamed body) except its text. */
function applyResponse(parsed: ParsedResponse, response: Record<string, unknown>): void {
  parsed.usage = responsesUsage(response.usage);
  if (asText(response.status) === 'failed') parsed.error = errorOf(response.error, 'response failed');
  else parsed.finishReason = finishOf(response);
}

function parseEvent(body: Record<string, unknown>): ParsedResponse {
  const parsed = emptyParse();
  const type = asText(body.type);
  if (type === 'response.output_text.delta' || type === 'response.function_call_arguments.delta') {
    parsed.text = asText(body.delta);
  } else if (type === 'response.reasoning_text.delta' || type === 'response.reasoning_summary_text.delta') {
    parsed.reasoning = asText(body.delta);
  } else if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
    applyResponse(parsed, asObject(body.response) ?? {});
    parsed.streamEnd = true;
  } else if (type === 'error') parsed.error = errorOf(body, 'error event');
  else parsed.error = inBandError(body);
  return parsed;
}

/**
 * Texts of `output[]` items: `output_text` parts of messages, function calls' name and arguments,
 * reasoning parts and summaries.
 */
function outputTexts(body: Record<string, unknown>): { text: string; reasoning: string } {
  let text = '';
  let reasoning = '';
  const output = Array.isArray(body.output) ? body.output : [];
  for (const entry of output) {
    const item = asObject(entry);
    if (item === null) continue;
    if (item.type === 'function_call') text += asText(item.name) + asText(item.arguments);
    const parts = [
      ...(Array.isArray(item.content) ? item.content : []),
      ...(Array.isArray(item.summary) ? item.summary : []),
    ];
    for (const part of parts) {
      const value = asText(asObject(part)?.text);
      if (item.type === 'reasoning') reasoning += value;
      else if (asObject(part)?.type === 'output_text') text += value;
    }
  }
  return { text: text || asText(body.output_text), reasoning };
}

function parseWhole(body: Record<string, unknown>): ParsedResponse {
  const parsed = emptyParse();
  const inBand = inBandError(body);
  applyResponse(parsed, body);
  if (inBand !== null && parsed.error === null) parsed.error = inBand;
  const { text, reasoning } = outputTexts(body);
  parsed.text = text;
  parsed.reasoning = reasoning;
  return parsed;
}

/** Parses one streamed event (`streaming`) or one non-streamed `response` body. Never throws. */
function parseResponses(json: unknown, streaming: boolean): ParsedResponse {
  const body = asObject(json);
  if (body === null) return emptyParse();
  return streaming ? parseEvent(body) : parseWhole(body);
}

/** The `responses` endpoint adapter. */
export const responses: EndpointAdapter = {
  name: 'responses',
  defaultPath: '/v1/responses',
  streamable: true,
  generatesTokens: true,
  chatTemplated: true,
  buildBody: buildResponsesBody,
  parse: parseResponses,
};
