/**
 * The rankings (rerank) endpoints, as AIPerf's `hf_tei_rankings`, `cohere_rankings` and
 * `nim_rankings` send and read them (AIPerf docs, tutorials/rankings.md; the wire formats of
 * Hugging Face TEI `POST /rerank`, the Cohere Rerank API `POST /v1/rerank` as vLLM serves it, and
 * NVIDIA NIM `POST /v1/ranking`). A request ranks passages against one query; nothing streams and no
 * output tokens come back, so a request is measured for latency only (like embeddings).
 * - Query and passages: the turn's named texts (`{"name": "query" | "queries", "contents": [...]}`
 *   and `{"name": "passages", ...}` in a JSONL `texts` array); the first query is used and every
 *   passage is kept. A turn without named texts sends its last message as the query and no passage.
 * - Bodies: TEI `{query, texts}`; Cohere `{model, query, documents}`; NIM
 *   `{model, query:{text}, passages:[{text}]}`; then `--extra-inputs`, then the turn's `extra`.
 * - Answers: TEI a `[{index, score}]` array (or `{results: [...]}`); Cohere `{results:[{index,
 *   relevance_score}], usage?}`; NIM `{rankings:[{index, logit}]}`. At least one result makes the
 *   request answered; errors are the usual `{error: …}` / `{message: …}` bodies.
 */
import type { NamedText } from '../dataset/types.js';
import { asObject, emptyParse, inBandError, usageOf } from './parse-common.js';
import type { BodyInput, EndpointAdapter, ParsedResponse } from './types.js';

/** The query and passages of one rankings request. */
export interface RankingsInput {
  query: string;
  passages: string[];
}

/**
 * The query and passages of `input`: from its named texts when given (first `query`/`queries`
 * content; every `passages` content), else its last message's text as the query and no passages.
 */
export function rankingsInputOf(input: Pick<BodyInput, 'messages' | 'namedTexts'>): RankingsInput {
  const named: readonly NamedText[] = input.namedTexts ?? [];
  const queries = named.filter((t) => t.name === 'query' || t.name === 'queries').flatMap((t) => t.contents);
  const passages = named.filter((t) => t.name === 'passages').flatMap((t) => t.contents);
  const last = input.messages[input.messages.length - 1]?.content;
  const query = queries[0] ?? (typeof last === 'string' ? last : '');
  return { query, passages };
}

function withExtras(body: Record<string, unknown>, input: BodyInput): Record<string, unknown> {
  Object.assign(body, input.extraInputs);
  if (input.turnExtra !== undefined) Object.assign(body, input.turnExtra);
  return body;
}

/** A rankings parse: `results` found (a non-empty array) marks the request answered. */
function parseRankings(
  json: unknown,
  results: (body: Record<string, unknown> | unknown[]) => unknown,
): ParsedResponse {
  const parsed = emptyParse();
  if (Array.isArray(json)) {
    if (json.length > 0) parsed.nonTokenContent = true;
    return parsed;
  }
  const body = asObject(json);
  if (body === null) return parsed;
  parsed.error = inBandError(body);
  parsed.usage = usageOf(body);
  const list = results(body);
  if (Array.isArray(list) && list.length > 0) parsed.nonTokenContent = true;
  return parsed;
}

const common = {
  streamable: false,
  generatesTokens: false,
  chatTemplated: false,
} as const;

/** `hf_tei_rankings`: Hugging Face Text Embeddings Inference, `POST /rerank`. */
export const hfTeiRankings: EndpointAdapter = {
  ...common,
  name: 'hf_tei_rankings',
  defaultPath: '/rerank',
  buildBody: (input) => {
    const { query, passages } = rankingsInputOf(input);
    return withExtras({ query, texts: passages }, input);
  },
  parse: (json) => parseRankings(json, (body) => (Array.isArray(body) ? body : body.results)),
};

/** `cohere_rankings`: the Cohere Rerank API (as vLLM serves it), `POST /v1/rerank`. */
export const cohereRankings: EndpointAdapter = {
  ...common,
  name: 'cohere_rankings',
  defaultPath: '/v1/rerank',
  buildBody: (input) => {
    const { query, passages } = rankingsInputOf(input);
    return withExtras({ model: input.model, query, documents: passages }, input);
  },
  parse: (json) => parseRankings(json, (body) => (Array.isArray(body) ? body : body.results)),
};

/** `nim_rankings`: NVIDIA NIM text reranking, `POST /v1/ranking`. */
export const nimRankings: EndpointAdapter = {
  ...common,
  name: 'nim_rankings',
  defaultPath: '/v1/ranking',
  buildBody: (input) => {
    const { query, passages } = rankingsInputOf(input);
    return withExtras(
      { model: input.model, query: { text: query }, passages: passages.map((text) => ({ text })) },
      input,
    );
  },
  parse: (json) => parseRankings(json, (body) => (Array.isArray(body) ? body : body.rankings)),
};
