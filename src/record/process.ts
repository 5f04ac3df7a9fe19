/**
 * The record stage: turns what the client observed ({@link RawRecord}) into a {@link ProcessedRecord}
 * with token counts and per-record metrics, dropping the response text.
 */
import type { TextTokenizer } from '../prompt/tokenizer.js';
import { effectiveError } from './failure.js';
import { itlPerChunkFallback } from './metric-defs/latency.js';
import { computeRecordMetrics } from './record-metrics.js';
import { bufferedDelivery, integrityOf, trustedUsage, usageFaults } from './stream-integrity.js';
import { countTokens, type TokenCounts } from './tokens.js';
import type { ProcessedRecord, RawRecord } from './types.js';

/** Run settings the record stage needs. */
export interface ProcessContext {
  /** Client tokenizer for output text; null to count chunks instead (see `countTokens`). */
  tokenizer: TextTokenizer | null;
  /** `--use-server-token-count`. */
  useServerTokenCount: boolean;
  /** Whether the run streams; stream-only metrics are omitted otherwise. */
  streaming: boolean;
  /** `--per-chunk-usage`: the ITL divisor may use the first chunk's running usage (`itlDivisor`). */
  perChunkUsage: boolean;
}

/**
 * Processes one record. Valid = no error, not cancelled, at least one content chunk. Token counts
 * follow `countTokens` (record/tokens.ts): ISL = server `prompt_tokens` with `--use-server-token-count`,
 * else the client-built prompt length, else `prompt_tokens`; OSL = server `completion_tokens` when
 * usage was sent, else tokenizer count of text + reasoning, else the number of content chunks. A
 * usage that contradicts the stream is not used (record/stream-integrity.ts); what was wrong with the
 * stream is the record's `streamIntegrity`.
 * Never throws (except a tokenizer failure).
 */
export function processRecord(raw: RawRecord, ctx: ProcessContext): ProcessedRecord {
  const error = effectiveError(raw);
  const valid = error === null;
  const { measured, tokens, faults } = countChecked(raw, valid, ctx);
  // A stream request answered with one whole body has no chunk arrivals to time: no streaming metric.
  const notStreamed = ctx.streaming && raw.responseStreamed === false;
  const streaming = ctx.streaming && !notStreamed;
  const input = { raw: measured, tokens, streaming, perChunkUsage: ctx.perChunkUsage };
  const metrics = computeRecordMetrics(input, valid);
  // One copy of the record without its chunks and tool calls (not a rest copy and then a spread copy of that).
  const { chunks, toolReply: _, ...rest } = raw;
  const processedRaw = rest as ProcessedRecord['raw'];
  processedRaw.error = error;
  processedRaw.chunkCount = chunks.length;
  const processed: ProcessedRecord = { raw: processedRaw, metrics, valid, oslSource: tokens.oslSource };
  if (tokens.islSource !== undefined) processed.islSource = tokens.islSource;
  if (raw.serverTiming !== undefined) processed.serverTimingSource = raw.serverTiming.source;
  if (raw.serverTiming?.invalid !== undefined) processed.serverTimingInvalid = raw.serverTiming.invalid;
  if (notStreamed) processed.notStreamed = true;
  if (valid && streaming && itlPerChunkFallback(input)) processed.itlPerChunkFallback = true;
  const integrity = integrityOf(raw, streaming ? bufferedDelivery(chunks) : undefined, faults);
  if (integrity !== undefined) processed.streamIntegrity = integrity;
  return processed;
}

/**
 * Token counts of `raw`, with its usage checked first (record/stream-integrity.ts): a successful
 * record whose usage contradicts its stream is counted again with only the usage that may be used
 * (`measured`, a copy of `raw`; the record itself keeps what the server sent).
 */
function countChecked(
  raw: RawRecord,
  valid: boolean,
  ctx: ProcessContext,
): { measured: RawRecord; tokens: TokenCounts; faults: ReturnType<typeof usageFaults> } {
  const tokens = countTokens(raw, ctx);
  if (!valid || raw.usage === null) return { measured: raw, tokens, faults: [] };
  const faults = usageFaults(raw, { outputTokens: tokens.clientOsl ?? raw.chunks.length });
  if (faults.length === 0) return { measured: raw, tokens, faults };
  const measured = { ...raw, usage: trustedUsage(raw.usage, faults) };
  const own = countTokens(measured, ctx);
  // The server claimed reasoning tokens the stream did not show: the client's count is 0, not unknown.
  const claimed = raw.usage.completion_tokens_details?.reasoning_tokens;
  if (own.reasoning === undefined && typeof claimed === 'number' && measured.usage === null)
    own.reasoning = 0;
  return { measured, tokens: own, faults };
}
