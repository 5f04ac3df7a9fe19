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
