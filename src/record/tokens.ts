/**
 * Token counting for one record. This is the single place that decides which count becomes ISL and
 * OSL; docs/metrics.md quotes the rule from {@link countTokens}.
 */
import type { TextTokenizer } from '../prompt/tokenizer.js';
import type { ContentChunk, IslSource, OslSource, RawRecord } from './types.js';

/** Inputs to token counting that come from the run configuration. */
export interface TokenContext {
  /** Client tokenizer for output text; null to skip tokenizing (then chunks are counted). */
  tokenizer: TextTokenizer | null;
  /** `--use-server-token-count`: take ISL from `usage.prompt_tokens` before the client count. */
  useServerTokenCount: boolean;
}

/** Token counts of one record. Every count is in tokens; undefined means "not known". */
export interface TokenCounts {
  /** Input sequence length chosen by the rule in {@link countTokens}. */
  isl?: number;
  /** Output sequence length (reasoning included) chosen by the rule in {@link countTokens}. */
  osl?: number;
  /** Reasoning tokens inside `osl`; undefined when the response had no reasoning at all. */
  reasoning?: number;
  /** Client-side prompt length (`RawRecord.inputTokens`), kept for the usage discrepancy metric. */
  clientIsl?: number;
  /** Client tokenizer count of output text + reasoning text; only when a tokenizer was given. */
  clientOsl?: number;
  /** Where `isl` came from; undefined when ISL is unknown. */
  islSource?: IslSource;
  /** Where `osl` came from. */
  oslSource: OslSource;
}

/** Output and reasoning text of all chunks, concatenated in one pass (one string each). */
function joinOutput(chunks: readonly ContentChunk[]): { text: string; reasoning: string } {
  let text = '';
  let reasoning = '';
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i] as ContentChunk;
    text += chunk.text;
    if (chunk.reasoning !== '') reasoning += chunk.reasoning;
  }
  return { text, reasoning };
}

/**
 * The client's count of the whole request: every message sent, history included
 * (`sentPromptTokens`), else the turn's own prompt (`inputTokens`); null when tokenload did not
 * build the prompt.
 */
function clientRequestTokens(raw: RawRecord): number | null {
  return raw.sentPromptTokens ?? raw.inputTokens;
}

function pickIsl(raw: RawRecord, useServer: boolean): Pick<TokenCounts, 'isl' | 'islSource'> {
  const server = raw.usage?.prompt_tokens;
  if (useServer && server !== undefined) return { isl: server, islSource: 'server_usage' };
  const client = clientRequestTokens(raw);
  if (client !== null) return { isl: client, islSource: 'client_prompt' };
  return server === undefined ? {} : { isl: server, islSource: 'server_usage' };
}

interface ClientOutput {
  text: number;
  reasoning: number;
  hasReasoning: boolean;
}

function clientOutput(chunks: readonly ContentChunk[], tokenizer: TextTokenizer | null): ClientOutput {
  if (tokenizer !== null) {
    const { text, reasoning } = joinOutput(chunks);
    return {
      text: text === '' ? 0 : tokenizer.count(text),
      reasoning: reasoning === '' ? 0 : tokenizer.count(reasoning),
      hasReasoning: reasoning !== '',
    };
  }
  // No tokenizer: one token per content chunk; a chunk with any non-reasoning text counts as output,
  // one with reasoning only as reasoning, an empty (non-token content, e.g. embeddings) one as nothing.
  let textChunks = 0;
  let reasoningChunks = 0;
  let hasReasoning = false;
  for (const chunk of chunks) {
    if (chunk.reasoning !== '') hasReasoning = true;
    if (chunk.text !== '') textChunks += 1;
    else if (chunk.reasoning !== '') reasoningChunks += 1;
  }
  return { text: textChunks, reasoning: reasoningChunks, hasReasoning };
}

/**
 * Counts a record's tokens.
 *
 * Rule (quoted by docs/metrics.md):
 * - **ISL** = `usage.prompt_tokens` when `--use-server-token-count` is on and the server sent it;
 *   otherwise the client's count of the whole request it built: every message sent, the history a
 *   multi-turn context mode re-sends included (`RawRecord.sentPromptTokens`, AIPerf's count since
 *   2026), else the turn's own prompt (`RawRecord.inputTokens`); otherwise — the record holds no
 *   prompt text to tokenize — `usage.prompt_tokens` as a fallback; otherwise unknown.
 * - **OSL** = `usage.completion_tokens` when the server sent usage (it already includes reasoning, and
 *   reasoning = `completion_tokens_details.reasoning_tokens`); otherwise the client tokenizer count of
 *   all output text concatenated plus, counted separately, all reasoning text concatenated; otherwise
 *   (no tokenizer) the number of content chunks, one token per chunk.
 * - Client and server values are both kept where both exist, for the usage discrepancy metrics.
 *
 * Never throws; a tokenizer error propagates.
 */
export function countTokens(raw: RawRecord, ctx: TokenContext): TokenCounts {
  const counts: TokenCounts = { ...pickIsl(raw, ctx.useServerTokenCount), oslSource: 'server_usage' };
  const client = clientRequestTokens(raw);
  if (client !== null) counts.clientIsl = client;
  const output = clientOutput(raw.chunks, ctx.tokenizer);
  if (ctx.tokenizer !== null) counts.clientOsl = output.text + output.reasoning;
  const serverOsl = raw.usage?.completion_tokens;
  if (serverOsl !== undefined) {
    counts.osl = serverOsl;
    const serverReasoning = raw.usage?.completion_tokens_details?.reasoning_tokens ?? undefined;
    const reasoning = serverReasoning ?? (output.hasReasoning ? output.reasoning : undefined);
    if (reasoning !== undefined) counts.reasoning = Math.min(reasoning, serverOsl);
    return counts;
  }
  counts.osl = output.text + output.reasoning;
  counts.oslSource = ctx.tokenizer === null ? 'content_chunks' : 'client_tokenizer';
  if (output.hasReasoning) counts.reasoning = output.reasoning;
  return counts;
}
