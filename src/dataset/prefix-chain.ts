/**
 * The ideal prefix cache: an infinite, never-evicting cache of prompt blocks, chained from block 0
 * (the definition in prefix-analysis.ts). `analyze` runs it over a whole trace; a run admits each
 * request as it is sent, so every record knows how many of its prompt tokens such a cache would
 * already hold (`ideal_cached_tokens`). Keys live in a {@link ChainTable} (chain-table.ts).
 *
 * Admitting costs about 0.2 µs per block (a 10k-token prompt of 16-token blocks: ~0.1 ms), so a run
 * only queues an admission when it sends (its time taken) and does the work when a request settles,
 * after its response: in admission order, up to the admissions its own settling needs.
 */
import { ChainTable, chainKeys } from './chain-table.js';

/** One block of a prompt: its id (a trace hash id, or a string for a prompt's own fresh tail) and its tokens. */
export interface CacheBlock {
  id: number | bigint | string;
  tokens: number;
}

/** Leading blocks of a prompt (and their tokens) the cache already held. */
export interface PrefixHit {
  blocks: number;
  tokens: number;
}

/**
 * Default bound of a run's cache: 2^22 distinct blocks (67M tokens of 16-token blocks, 2G of 512), a
 * table of 2^23 slots, 192 MiB, at most.
 */
export const DEFAULT_IDEAL_CACHE_BLOCKS = 2 ** 22;

/**
 * The blocks of a prompt of `inputLength` tokens built from `hashIds` (`blockSize` tokens each; the last
 * may be partial and counts only its own tokens), then, when `tailKey` is given and the ids cover
 * less than the whole prompt, its fresh tail as one block of its own: a tail is unique to the request
 * it was made for (its key), so it hits only when that same prompt was sent before.
 */
export function promptBlocks(
  hashIds: readonly (number | bigint)[],
  inputLength: number,
  blockSize: number,
  tailKey?: string,
): CacheBlock[] {
  const blocks: CacheBlock[] = hashIds.map((id, i) => ({
    id,
    tokens: Math.max(0, Math.min(blockSize, inputLength - i * blockSize)),
  }));
  const tail = inputLength - hashIds.length * blockSize;
  if (tailKey !== undefined && tail > 0) blocks.push({ id: `tail:${tailKey}`, tokens: tail });
  return blocks;
}

/** One prompt admitted to an {@link IdealPrefixCache}. */
export interface Admission {
  /**
   * Its hits against every prompt admitted before `sentNs`, the moment it was on the wire (same
   * clock as the admission's): the leading blocks that prompts admitted before it had, extended by
   * those that a prompt admitted after it (started later) but before `sentNs` also had, since two
   * requests started a fraction of a millisecond apart reach the server in either order. `sentNs`
   * null (never on the wire): against the prompts admitted before it only. Null when the cache had
   * filled before this prompt was admitted (a hit could then be missed).
   */
  settle(sentNs: number | null): PrefixHit | null;
}

/** An admission waiting in the queue, then its result: hits at admission, and the blocks after them. */
interface Queued {
  seq: number;
  blocks: readonly CacheBlock[];
  atNs: number;
  done?: { hit: PrefixHit; missKeys: Uint32Array; missTokens: number[] } | null;
}

/** An infinite prefix cache of block chains (bounded only by `maxBlocks`). Not thread-safe. */
export class IdealPrefixCache {
  private readonly table = new ChainTable();
  private queue: Queued[] = [];
  private head = 0;
  private seq = 0;
  /** True once `maxBlocks` blocks are held: later admissions settle to null and record nothing. */
  full = false;

  /** @param maxBlocks distinct blocks kept at most (Infinity: grow until memory runs out). */
  constructor(private readonly maxBlocks: number = DEFAULT_IDEAL_CACHE_BLOCKS) {}

  /** Distinct chained blocks held. */
  get size(): number {
    return this.table.size;
  }

  /** Queues a prompt made of `blocks`, sent at `atNs` (calls in time order); the work is done later. */
  admit(blocks: readonly CacheBlock[], atNs: number): Admission {
    const item: Queued = { seq: this.seq++, blocks, atNs };
    this.queue.push(item);
    return { settle: (sentNs) => this.settle(item, sentNs) };
  }

  private settle(item: Queued, sentNs: number | null): PrefixHit | null {
    this.drain(item.seq, sentNs ?? Number.NEGATIVE_INFINITY);
    const done = item.done;
    if (done === null || done === undefined) return null;
    const hit = { ...done.hit };
    for (let j = 0; sentNs !== null && j < done.missTokens.length; j++) {
      const k1 = done.missKeys[2 * j] as number;
      const k2 = done.missKeys[2 * j + 1] as number;
      if (!(this.table.secondOf(k1, k2) < sentNs)) break;
      // The raced prompt held only the tokens of the block it sent (fewer when it sent it partial).
      const tokens = done.missTokens[j] as number;
      const held = Math.min(tokens, this.table.secondTokensOf(k1, k2));
      hit.blocks++;
      hit.tokens += held;
      if (held < tokens) break;
    }
    return hit;
  }

  /** Processes queued admissions in order: through `seq`, and every one admitted before `beforeNs`. */
  private drain(seq: number, beforeNs: number): void {
    while (this.head < this.queue.length) {
      const next = this.queue[this.head] as Queued;
      if (next.seq > seq && !(next.atNs < beforeNs)) break;
      next.done = this.full ? null : this.process(next);
      this.head++;
    }
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }

  /**
   * Admits one prompt: its leading blocks held are hits, each for at most the tokens of it held (a
   * block first sent partial holds only those tokens; a hit on part of a block ends the prefix).
   */
  private process(item: Queued): NonNullable<Queued['done']> | null {
    const { blocks } = item;
    const keys = chainKeys(blocks.map((b) => b.id));
    const hit: PrefixHit = { blocks: 0, tokens: 0 };
    let j = 0;
    let partial = false;
    for (; j < blocks.length && !partial; j++) {
      const tokens = (blocks[j] as CacheBlock).tokens;
      const held = this.table.add(keys[2 * j] as number, keys[2 * j + 1] as number, item.atNs, tokens);
      if (held < 0) break;
      hit.blocks++;
      hit.tokens += Math.min(held, tokens);
      partial = held < tokens;
    }
    // Unless the prefix ended inside a block, block j (the first miss) is in the table already; the
    // rest of the chain goes in after it.
    const missTokens: number[] = [];
    for (let i = j; i < blocks.length; i++) {
      const tokens = (blocks[i] as CacheBlock).tokens;
      if (partial || i > j)
        this.table.add(keys[2 * i] as number, keys[2 * i + 1] as number, item.atNs, tokens);
      missTokens.push(tokens);
    }
    if (this.table.size >= this.maxBlocks) this.full = true;
    if (this.full) return null;
    // A prefix that ended inside a block cannot be extended by a raced prompt's blocks.
    return partial
      ? { hit, missKeys: new Uint32Array(0), missTokens: [] }
      : { hit, missKeys: keys.subarray(2 * j), missTokens };
  }
}
