/**
 * Which count is a record's output length, per the SSE fixture format (FORMAT.md §6.2): the last
 * non-null `usage.completion_tokens` when the server sent one, else one token per content chunk.
 * Never the requested `max_tokens`. The fixture tests' small stand-in for the record processor.
 */
import type { RawRecord } from '../../src/record/types.js';

/** Where an output token count came from. */
export type TokenCountSource = 'usage' | 'chunks';

/** Output length in tokens (reasoning included) and where it came from. */
export interface OutputLength {
  osl: number;
  reasoningTokens: number;
  source: TokenCountSource;
}

/** Output and reasoning token counts of a raw record (FORMAT.md §6.2). */
export function oslFromRecord(raw: RawRecord): OutputLength {
  const completion = raw.usage?.completion_tokens;
  if (typeof completion === 'number') {
    const reasoning = raw.usage?.completion_tokens_details?.reasoning_tokens ?? 0;
    return { osl: completion, reasoningTokens: reasoning, source: 'usage' };
  }
  let reasoningChunks = 0;
  for (const chunk of raw.chunks) if (chunk.reasoning !== '') reasoningChunks += 1;
  return { osl: raw.chunks.length, reasoningTokens: reasoningChunks, source: 'chunks' };
}
