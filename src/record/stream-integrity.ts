/**
 * Stream integrity of one request: signs that the stream the client received is not the stream the
 * server generated, or that the server's `usage` cannot describe it (`test/fixtures/sse/FORMAT.md`
 * §6.1, §6.2, §6.4; docs/usage-and-cache-checks.md, "Stream integrity"). Every check runs once, when
 * the record is complete, over what the client already kept (chunk texts and arrival stamps); none
 * runs per chunk. A clean stream gets no {@link StreamIntegrity} at all.
 */
import type {
  BufferedDelivery,
  ContentChunk,
  RawRecord,
  StreamIntegrity,
  Usage,
  UsageFault,
} from './types.js';

/** A content chunk count at or above which one network read is a burst (FORMAT.md §6.4). */
export const BUFFERED_MIN_BURST_CHUNKS = 5;
/** Chunks a stream needs before its texts can be judged cumulative (FORMAT.md §6.1). */
export const CUMULATIVE_MIN_CHUNKS = 3;
/** `usage.prompt_tokens` may be below the client's count by at most this % of it… */
export const PROMPT_SHORTFALL_PCT = 10;
/** …or this many tokens, whichever is more (a chat template only adds tokens). */
export const PROMPT_SHORTFALL_MIN_TOKENS = 8;

/**
 * Cuts every chunk's `pick` text to what it adds to the one before when the stream is cumulative:
 * at least {@link CUMULATIVE_MIN_CHUNKS} chunks carry such text, and each after the first begins
 * with the whole text of the one before and is longer. Stops at the first chunk that does not (a
 * delta stream fails at its second text chunk). Returns true when it cut.
 */
function cutCumulative(chunks: ContentChunk[], pick: 'text' | 'reasoning'): boolean {
  let previous: string | null = null;
  let count = 0;
  for (let i = 0; i < chunks.length; i++) {
    const text = (chunks[i] as ContentChunk)[pick];
    if (text === '') continue;
    if (previous !== null && !(text.length > previous.length && text.startsWith(previous))) return false;
    previous = text;
    count++;
  }
  if (count < CUMULATIVE_MIN_CHUNKS) return false;
  let soFar = 0;
  for (let i = 0; i < chunks.length; i++) {
    const chunk = chunks[i] as ContentChunk;
    const text = chunk[pick];
    if (text === '') continue;
    chunk[pick] = text.slice(soFar);
    soFar = text.length;
  }
  return true;
}

/**
 * Detects a cumulative stream (FORMAT.md §6.1) in `raw`'s chunks, output and reasoning texts
 * apart, and cuts its chunk texts to increments in place, so that everything downstream (token
 * counts, the multi-turn history, the raw export) sees what each chunk added. Sets
 * `raw.cumulativeText`. Called once per record, when it is finished (client/record-builder.ts).
 */
export function settleCumulative(raw: RawRecord): void {
  const text = cutCumulative(raw.chunks, 'text');
  const reasoning = cutCumulative(raw.chunks, 'reasoning');
  if (text || reasoning) raw.cumulativeText = true;
}

/** {@link BufferedDelivery} of `chunks` when their arrivals show it (FORMAT.md §6.4); else undefined. */
export function bufferedDelivery(chunks: readonly ContentChunk[]): BufferedDelivery | undefined {
  const gaps = chunks.length - 1;
  if (gaps < BUFFERED_MIN_BURST_CHUNKS - 1) return undefined;
  let zeroGaps = 0;
  let burst = 1;
  let largest = 1;
  for (let i = 1; i < chunks.length; i++) {
    if ((chunks[i] as ContentChunk).atNs === (chunks[i - 1] as ContentChunk).atNs) {
      zeroGaps++;
      burst++;
      if (burst > largest) largest = burst;
    } else burst = 1;
  }
  if (largest < BUFFERED_MIN_BURST_CHUNKS || 2 * zeroGaps < gaps) return undefined;
  return { largest_burst_chunks: largest, zero_gaps: zeroGaps, gaps };
}

/** What the client knows of a request's output, to check the server's usage against. */
export interface ClientOutputCounts {
  /** The client's count of the output tokens: its tokenizer's, else its content chunks. */
  outputTokens: number;
}

function reasoningChunksOf(chunks: readonly ContentChunk[]): number {
  let n = 0;
  for (const chunk of chunks) if (chunk.reasoning !== '') n++;
  return n;
}

/** The completion-side faults of `usage` (FORMAT.md §6.2); `faults` collects them. */
function completionFaults(
  raw: RawRecord,
  usage: Usage,
  client: ClientOutputCounts,
  faults: UsageFault[],
): void {
  const completion = usage.completion_tokens;
  if (completion === undefined) return;
  const max = raw.requestedOutputTokens;
  // Above max_tokens while the client saw no more than max_tokens: a server that really ignored
  // max_tokens streams the extra tokens too, and that is the OSL warning's case, not this one.
  const overMax = max !== null && max > 0 && completion > max && client.outputTokens <= max;
  if (overMax || completion < raw.chunks.length) faults.push('completion_tokens');
  const reasoning = usage.completion_tokens_details?.reasoning_tokens;
  if (typeof reasoning === 'number' && (reasoning > completion || reasoning < reasoningChunksOf(raw.chunks)))
    faults.push('reasoning_tokens');
  const prompt = usage.prompt_tokens;
  const total = usage.total_tokens;
  if (total !== undefined && prompt !== undefined && total !== prompt + completion)
    faults.push('total_tokens');
}

/** `prompt_tokens` below the client's count of what it sent by more than the rule allows. */
function promptFault(raw: RawRecord, usage: Usage): boolean {
  const prompt = usage.prompt_tokens;
  const client = raw.sentPromptTokens ?? raw.inputTokens;
  if (prompt === undefined || client === null) return false;
  const allowed = Math.max((PROMPT_SHORTFALL_PCT / 100) * client, PROMPT_SHORTFALL_MIN_TOKENS);
  return client - prompt > allowed;
}

/**
 * The `usage` fields of a successful `raw` that cannot be right (FORMAT.md §6.2), in a fixed order:
 * `completion_tokens` above the `max_tokens` asked for (while the client saw no more) or below the
 * content chunks (each brings at least one token); `reasoning_tokens` above `completion_tokens` or
 * below the reasoning chunks; `total_tokens` ≠ `prompt_tokens + completion_tokens`;
 * `prompt_tokens` below the client's count of what it sent by more than max({@link
 * PROMPT_SHORTFALL_PCT} %, {@link PROMPT_SHORTFALL_MIN_TOKENS} tokens). Empty without usage.
 */
export function usageFaults(raw: RawRecord, client: ClientOutputCounts): UsageFault[] {
  const usage = raw.usage;
  const faults: UsageFault[] = [];
  if (usage === null) return faults;
  completionFaults(raw, usage, client, faults);
  if (promptFault(raw, usage)) faults.push('prompt_tokens');
  return faults;
}

/**
 * The part of `usage` that may still be used after `faults`: nothing when an output count is at
 * fault (completion, reasoning or total: the output counts are then the client's), the output
 * counts without the prompt's when only `prompt_tokens` is (ISL and cached tokens are then
 * unknown to the server's side, the client's count is the ISL).
 */
export function trustedUsage(usage: Usage, faults: readonly UsageFault[]): Usage | null {
  if (faults.length === 0) return usage;
  if (faults.some((f) => f !== 'prompt_tokens')) return null;
  const { prompt_tokens: _, prompt_tokens_details: __, total_tokens: ___, ...rest } = usage;
  return rest;
}

/** The {@link StreamIntegrity} of a record from its parts; undefined when nothing applies. */
export function integrityOf(
  raw: RawRecord,
  buffered: BufferedDelivery | undefined,
  faults: readonly UsageFault[],
): StreamIntegrity | undefined {
  if (buffered === undefined && raw.cumulativeText !== true && faults.length === 0) return undefined;
  const out: StreamIntegrity = {};
  if (buffered !== undefined) out.buffered = buffered;
  if (raw.cumulativeText === true) out.cumulative = true;
  if (faults.length > 0) out.usage_untrusted = [...faults];
  return out;
}
