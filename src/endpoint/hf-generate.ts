/**
 * Hugging Face Text Generation Inference (TGI docs, "API reference": `POST /generate` and
 * `POST /generate_stream`). The route, not the body, selects streaming.
 * - Streamed events: `{index, token:{id, text, logprob, special}, generated_text, details}`. A
 *   special token (e.g. `</s>`) is not content. Only the last event has `generated_text` (the whole
 *   output again, not read) and `details` with `finish_reason` and `generated_tokens`; that
 *   `finish_reason` is the stream's end marker (TGI sends no `[DONE]`).
 * - A non-streamed body is `{generated_text, details?}` (some deployments wrap it in a one-element
 *   array).
 * - Errors are `{error: "…", error_type: "…"}`, in a body or as a stream event.
 */
import type { Usage } from '../record/types.js';
import { promptOf } from './completions.js';
import { asObject, asText, emptyParse, inBandError } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/**
 * Builds `{inputs, parameters:{max_new_tokens, details:true}}` (`max_new_tokens` only when
 * `maxTokens` is set), then shallow-merges `extraInputs`, then `turnExtra`. `inputs` is the prompt
 * as the completions endpoint builds it.
 */
function buildGenerateBody(input: BodyInput): Record<string, unknown> {
  const parameters: Record<string, unknown> = {};
  if (input.maxTokens !== undefined) parameters.max_new_tokens = input.maxTokens;
  parameters.details = true;
  const body: Record<string, unknown> = { inputs: promptOf(input.messages), parameters };
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `details` as usage: `generated_tokens` → completion, `input_length` (when sent) → prompt. */
function usageOfDetails(details: Record<string, unknown>): Usage | null {
  const usage: Usage = {};
  const generated = count(details.generated_tokens);
  const input = count(details.input_length);
  if (generated !== undefined) usage.completion_tokens = generated;
  if (input !== undefined) usage.prompt_tokens = input;
  return generated === undefined && input === undefined ? null : usage;
}

function errorOf(body: Record<string, unknown>): ParsedResponse['error'] {
  const error = inBandError(body);
  if (error !== null && error.type === null) error.type = asText(body.error_type) || null;
  return error;
}

/** Applies `details` (finish reason and token counts), when present. */
function applyDetails(parsed: ParsedResponse, body: Record<string, unknown>): void {
  const details = asObject(body.details);
  if (details === null) return;
  parsed.finishReason = asText(details.finish_reason) || null;
  parsed.usage = usageOfDetails(details);
}

function parseGenerate(json: unknown, streaming: boolean): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(Array.isArray(json) ? json[0] : json);
  if (body === null) return parsed;
  parsed.error = errorOf(body);
  applyDetails(parsed, body);
  if (streaming) {
    const token = asObject(body.token);
    if (token !== null && token.special !== true) parsed.text = asText(token.text);
  } else {
    parsed.text = asText(body.generated_text);
  }
  return parsed;
}

/** The `huggingface_generate` endpoint adapter. */
export const huggingfaceGenerate: EndpointAdapter = {
  name: 'huggingface_generate',
  defaultPath: '/generate',
  streamingPath: '/generate_stream',
  streamable: true,
  generatesTokens: true,
  chatTemplated: false,
  buildBody: buildGenerateBody,
  parse: parseGenerate,
};
