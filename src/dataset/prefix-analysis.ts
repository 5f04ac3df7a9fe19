/**
 * Ideal prefix-cache hit ratio of a trace: the share of prompt blocks (and tokens) an infinite,
 * never-evicting prefix cache would serve, if requests arrived in timestamp order and each finished
 * before the next arrived. It is an upper bound for a real server's cache hit rate on the trace.
 *
 * Definition. Block i of a request HITS when some earlier request had exactly the same ids at
 * positions 0..i (a position-wise, chained match from block 0). Merely having seen id X somewhere
 * before is not a hit: Bailian ids are per-block content hashes that recur at other positions and in
 * unrelated tails; Mooncake ids are already prefix-chained, so both readings agree there. Block i
 * holds `min(blockSize, inputLength − i·blockSize)` tokens (the last block may be partial); a hit
 * counts at most the tokens of the block that earlier requests sent (a block first sent partial holds
 * only those tokens, and a hit on part of a block ends the prefix; once sent whole it is held whole);
 * tokens past the last id are fresh input and always miss. This comment is the definition
 * `analyze-trace` reports.
 */
import { IdealPrefixCache, type PrefixHit, promptBlocks } from './prefix-chain.js';
import type { Dataset, TraceId } from './types.js';

/** One request as the analysis sees it. */
export interface PrefixRequest {
  /** Block ids, block 0 first (64-bit ids beyond 2^53 − 1 as bigints; compared by value). */
  hashIds: readonly TraceId[];
  /** Prompt tokens. */
  inputLength: number;
  /** Tokens per block. */
  blockSize: number;
  /** Arrival, ms; used for ordering when every request has one. */
  timestampMs?: number;
}

/**
 * The warning for `ids` distinct hash ids that appeared with two different block sizes (a partial
 * last block in one request, another size in another): a sign of a wrong `--isl-block-size`.
 */
export function blockSizeWarning(ids: number): string {
  return `${ids} hash_id${ids === 1 ? '' : 's'} appeared with two different block sizes; check --isl-block-size`;
}

/** Result of {@link idealPrefixHit}. Ratios are 0 when their denominator is 0. */
export interface PrefixHitStats {
  /** Distinct hash ids that appeared with two different block sizes ({@link blockSizeWarning}). */
  sizeConflictIds: number;
  hitBlocks: number;
  /** Σ number of ids over all requests. */
  totalBlocks: number;
  hitTokens: number;
  /** Σ `inputLength` over all requests. */
  totalTokens: number;
  /** hitBlocks / totalBlocks. */
  blockHitRatio: number;
  /** hitTokens / totalTokens. */
  tokenHitRatio: number;
}

function isDataset(source: Dataset | Iterable<PrefixRequest>): source is Dataset {
  return 'conversations' in source && Array.isArray(source.conversations);
}

/** Synthetic turns of a dataset, conversation by conversation (turns of other prompt kinds are skipped). */
function requestsOfDataset(dataset: Dataset): PrefixRequest[] {
  const requests: PrefixRequest[] = [];
  for (const conversation of dataset.conversations) {
    for (const turn of conversation.turns) {
      if (turn.prompt.kind !== 'synthetic') continue;
      const { hashIds, inputLength, blockSize } = turn.prompt;
      requests.push({ hashIds, inputLength, blockSize, timestampMs: turn.timestampMs });
    }
  }
  return requests;
}

/** Stable sort by timestamp, only when every request has one; otherwise the given order is kept. */
function arrivalOrder(requests: PrefixRequest[]): PrefixRequest[] {
  if (requests.some((r) => r.timestampMs === undefined)) return requests;
  return requests.sort((a, b) => a.timestampMs! - b.timestampMs!);
}

/**
 * Computes the ideal (infinite-cache) prefix hit figures of a trace; see the module comment for the
 * exact definition.
 * @param source a loaded dataset (its synthetic turns are used), or requests in any order.
 * Requests are processed in timestamp order (stable: ties keep the given order, and for a dataset the
 * given order is conversation by conversation); if any request lacks a timestamp, the given order is used.
 */
export function idealPrefixHit(source: Dataset | Iterable<PrefixRequest>): PrefixHitStats {
  const requests = arrivalOrder(isDataset(source) ? requestsOfDataset(source) : [...source]);
  const cache = new IdealPrefixCache(Number.POSITIVE_INFINITY);
  let hitBlocks = 0;
  let totalBlocks = 0;
  let hitTokens = 0;
  let totalTokens = 0;
  const sizes = new Map<TraceId, number>();
  const conflicts = new Set<TraceId>();
  for (const request of requests) {
    totalBlocks += request.hashIds.length;
    totalTokens += request.inputLength;
    const blocks = promptBlocks(request.hashIds, request.inputLength, request.blockSize);
    for (const b of blocks) {
      const id = b.id as TraceId;
      const seen = sizes.get(id);
      if (seen === undefined) sizes.set(id, b.tokens);
      else if (seen !== b.tokens) conflicts.add(id);
    }
    const hit = cache.admit(blocks, 0).settle(null) as PrefixHit;
    hitBlocks += hit.blocks;
    hitTokens += hit.tokens;
  }
  return {
    sizeConflictIds: conflicts.size,
    hitBlocks,
    totalBlocks,
    hitTokens,
    totalTokens,
    blockHitRatio: totalBlocks === 0 ? 0 : hitBlocks / totalBlocks,
    tokenHitRatio: totalTokens === 0 ? 0 : hitTokens / totalTokens,
  };
}
