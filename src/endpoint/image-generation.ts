/**
 * OpenAI Image Generation (`POST /v1/images/generations`), as AIPerf's `image_generation` endpoint
 * type sends and reads it (AIPerf docs, tutorials/image-generation.md; OpenAI API reference,
 * "Create image" and "Image generation streaming events"; SGLang diffusion serves the same route).
 * - Body: `{prompt, model, response_format: "b64_json", n: 1}` (SGLang answers base64 only, hence
 *   AIPerf's default), `stream: true` only when streaming, then `--extra-inputs` (`size`, `quality`,
 *   `partial_images`, …), then the turn's `extra`. The prompt is the turn's text.
 * - Whole answer: `{created, data: [{b64_json | url, revised_prompt?}], usage?}`; at least one image
 *   makes the request answered. Streamed: events `image_generation.partial_image` and
 *   `image_generation.completed`, each with a `b64_json`; the completed event ends the stream.
 * - No text tokens come back: a record has the request latency and the prompt's ISL, no OSL, TTFT
 *   or ITL worth reading, as AIPerf's "Image Generation Metrics" table shows. `usage.input_tokens`
 *   (the API's image usage) is read as `prompt_tokens`; the image's output tokens are not text and
 *   are not counted.
 */
import type { Usage } from '../record/types.js';
import { asObject, asText, emptyParse, inBandError } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/** The streamed event that carries the final image and ends the stream. */
export const IMAGE_COMPLETED_EVENT = 'image_generation.completed';

/** The text of the turn to draw: its last message with text content ('' when none). */
export function promptOf(input: Pick<BodyInput, 'messages'>): string {
  for (let i = input.messages.length - 1; i >= 0; i--) {
    const content = input.messages[i]?.content;
    if (typeof content === 'string') return content;
  }
  return '';
}

/**
 * Builds `{prompt, model, response_format: "b64_json", n: 1, stream?}`, then shallow-merges
 * `extraInputs`, then `turnExtra` (each may override the defaults). `maxTokens` does not apply.
 */
function buildImageBody(input: BodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = {
    prompt: promptOf(input),
    model: input.model,
    response_format: 'b64_json',
    n: 1,
  };
  if (input.stream) body.stream = true;
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

/** The image API's `usage` (`input_tokens`, …) as {@link Usage}: its prompt tokens only. */
function imageUsage(value: unknown): Usage | null {
  const usage = asObject(value);
  if (usage === null) return null;
  if (typeof usage.input_tokens === 'number') return { prompt_tokens: usage.input_tokens };
  if (typeof usage.prompt_tokens === 'number') return { prompt_tokens: usage.prompt_tokens };
  return null;
}

/** True when `data` lists at least one image (a `b64_json` or `url` string). */
function hasImage(data: unknown): boolean {
  if (!Array.isArray(data)) return false;
  return data.some((item) => {
    const image = asObject(item);
    return asText(image?.b64_json) !== '' || asText(image?.url) !== '';
  });
}

/** Parses one image payload (a whole answer, or one streamed event). Never throws. */
function parseImage(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  if (parsed.error !== null) return parsed;
  parsed.usage = imageUsage(body.usage);
  if (asText(body.b64_json) !== '' || hasImage(body.data)) parsed.nonTokenContent = true;
  if (body.type === IMAGE_COMPLETED_EVENT) parsed.streamEnd = true;
  return parsed;
}

/** The `image_generation` endpoint adapter. */
export const imageGeneration: EndpointAdapter = {
  name: 'image_generation',
  defaultPath: '/v1/images/generations',
  streamable: true,
  generatesTokens: false,
  chatTemplated: false,
  buildBody: buildImageBody,
  parse: (json) => parseImage(json),
};
