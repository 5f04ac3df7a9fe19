/**
 * OpenAI Embeddings (`POST /v1/embeddings`), per the OpenAI API reference ("Create embeddings") and
 * AIPerf's embeddings endpoint (AIPerf reference, "Endpoint types and wire formats"). Not streamable
 * and produces no tokens: a request is measured for latency only. A successful body is
 * `{object:"list", data:[{object:"embedding", index, embedding:[…]}], usage:{prompt_tokens, total_tokens}}`.
 */
import { asObject, emptyParse, inBandError, usageOf } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/**
 * Builds `{model, input}` where `input` lists the text of every message (string contents; null
 * contents are skipped), then shallow-merges `extraInputs`, then `turnExtra`. There is no `stream`
 * field and no output-length field: embeddings have no output tokens, so `maxTokens` is ignored.
 */
function buildEmbeddingsBody(input: BodyInput): Record<string, unknown> {
  const texts: string[] = [];
  for (const message of input.messages) if (typeof message.content === 'string') texts.push(message.content);
  const body: Record<string, unknown> = { model: input.model, input: texts };
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

/** True when `data` holds at least one embedding object (a vector or a base64 string). */
function hasEmbedding(body: Record<string, unknown>): boolean {
  const data = body.data;
  if (!Array.isArray(data)) return false;
  return data.some((item) => {
    const embedding = asObject(item)?.embedding;
    return Array.isArray(embedding) || typeof embedding === 'string';
  });
}

/**
 * Parses one embeddings body. The vectors themselves are not kept: a body with at least one
 * embedding reports `nonTokenContent`, so the record is valid without any text.
 */
function parseEmbeddings(json: unknown): ParsedResponse {
  const parsed = emptyParse();
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  parsed.usage = usageOf(body);
  if (hasEmbedding(body)) parsed.nonTokenContent = true;
  return parsed;
}

/**
 * Builds `{model, messages}` (the turn's messages, no `stream`, no output length), then shallow-merges
 * `extraInputs`, then `turnExtra`: the chat-style embeddings body vLLM takes on `/v1/embeddings`.
 */
function buildChatEmbeddingsBody(input: BodyInput): Record<string, unknown> {
  const body: Record<string, unknown> = { model: input.model, messages: input.messages };
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

/** The `embeddings` endpoint adapter. */
export const embeddings: EndpointAdapter = {
  name: 'embeddings',
  defaultPath: '/v1/embeddings',
  streamable: false,
  generatesTokens: false,
  chatTemplated: false,
  buildBody: buildEmbeddingsBody,
  parse: (json) => parseEmbeddings(json),
};

/**
 * `nim_embeddings`: NVIDIA NIM embeddings, `POST /v1/embeddings`. For text inputs (the only ones
 * tokenload sends) AIPerf's NIM type builds the OpenAI body, so this is {@link embeddings} under
 * AIPerf's name (NIM's image inputs are not sent).
 */
export const nimEmbeddings: EndpointAdapter = { ...embeddings, name: 'nim_embeddings' };

/**
 * `chat_embeddings`: AIPerf's chat-style embeddings for vLLM (`POST /v1/embeddings` with `messages`
 * instead of `input`, the way vLLM takes multimodal embedding requests); the answer is read as
 * {@link embeddings} reads it. System messages are sent as they are (the server templates them).
 */
export const chatEmbeddings: EndpointAdapter = {
  ...embeddings,
  name: 'chat_embeddings',
  chatTemplated: true,
  buildBody: buildChatEmbeddingsBody,
};
