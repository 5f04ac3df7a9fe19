/**
 * Paged KV memory with automatic prefix caching, modelled on vLLM's block manager: the pool has a
 * fixed number of blocks of `blockSize` tokens; each full prompt block is named by a hash chained
 * over (previous block's key, this block's token ids), so two prompts share a cached block only if
 * they share every token before it as well. Running sequences hold (reference) blocks; blocks whose
 * reference count drops to zero stay cached and are evicted least-recently-used when space is needed.
 */

/** Counters of the pool since start. Token counts are block-aligned, like vLLM's. */
export interface KvPoolStats {
  /** Prompt tokens looked up in the cache (every admitted prompt's full length). */
  queryTokens: number;
  /** Prompt tokens served from the cache. */
  hitTokens: number;
  /** Full prompt blocks looked up. */
  queryBlocks: number;
  /** Full prompt blocks found. */
  hitBlocks: number;
  /** Blocks evicted from the cache. */
  evictedBlocks: number;
  /** Blocks currently referenced by running sequences (cached or not). */
  usedBlocks: number;
  /** Cached blocks held by nobody (evictable). */
  idleCachedBlocks: number;
  /** Pool size in blocks. */
  capacityBlocks: number;
}

/** Blocks one sequence holds, returned by {@link KvPool.allocate}. */
export interface KvAllocation {
  /** Keys of the leading cached blocks the sequence reuses. */
  readonly hitKeys: number[];
  /** Keys of blocks the sequence registered after its prefill. */
  readonly ownKeys: number[];
  /** Blocks held that are not (or not yet) in the cache. */
  anonBlocks: number;
}

/** A cached block; while unreferenced (`refs` 0) it is linked into the idle LRU list. */
interface CachedBlock {
  key: number;
  refs: number;
  /** Neighbours in the idle list (older / newer); null at the ends or when not idle. */
  older: CachedBlock | null;
  newer: CachedBlock | null;
}

/**
 * Unreferenced cached blocks in LRU order, as an intrusive doubly-linked list: O(1) to add the
 * newest, take out any block, and evict the oldest. (Evicting from the front of a V8 `Map` in
 * insertion order leaves deleted slots that the next `keys().next()` walks over until the table is
 * rebuilt, which made eviction O(pool) under a trace of ever-new prefixes.)
 */
class IdleList {
  private oldest: CachedBlock | null = null;
  private newest: CachedBlock | null = null;
  size = 0;

  push(block: CachedBlock): void {
    block.older = this.newest;
    block.newer = null;
    if (this.newest === null) this.oldest = block;
    else this.newest.newer = block;
    this.newest = block;
    this.size++;
  }

  remove(block: CachedBlock): void {
    if (block.older === null) this.oldest = block.newer;
    else block.older.newer = block.newer;
    if (block.newer === null) this.newest = block.older;
    else block.newer.older = block.older;
    block.older = null;
    block.newer = null;
    this.size--;
  }

  /** Removes and returns the least recently used block, or null when empty. */
  shift(): CachedBlock | null {
    const block = this.oldest;
    if (block !== null) this.remove(block);
    return block;
  }
}

const FNV_PRIME = 0x01000193;

/**
 * Keys of the full `blockSize`-token blocks of `ids`, each chained to the previous one. Keys are
 * 53-bit integers made of two independent 32-bit FNV-1a-style hashes (collisions are negligible
 * for millions of blocks).
 */
export function chainedBlockKeys(ids: readonly number[], blockSize: number): number[] {
  const keys: number[] = [];
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  const full = Math.floor(ids.length / blockSize);
  for (let b = 0; b < full; b++) {
    for (let i = b * blockSize, end = i + blockSize; i < end; i++) {
      const v = ids[i] ?? 0;
      h1 = Math.imul(h1 ^ v, FNV_PRIME);
      h2 = Math.imul(h2 ^ (v + 0x632be5ab), 0x85ebca6b);
      h2 ^= h2 >>> 13;
    }
    keys.push((h1 >>> 0) * 0x200000 + (h2 >>> 11));
  }
  return keys;
}

/** A fixed-size KV block pool with an LRU prefix cache. Not thread-safe; one event loop. */
export class KvPool {
  private readonly cached = new Map<number, CachedBlock>();
  /** Unreferenced cached blocks in LRU order (oldest first). */
  private readonly idle = new IdleList();
  private anon = 0;
  private referencedCached = 0;
  private readonly counters = {
    queryTokens: 0,
    hitTokens: 0,
    queryBlocks: 0,
    hitBlocks: 0,
    evictedBlocks: 0,
  };

  /**
   * @param capacityBlocks pool size in blocks.
   * @param blockSize tokens per block.
   * @param cacheEnabled false turns prefix reuse off (blocks are still accounted).
   */
  constructor(
    readonly capacityBlocks: number,
    readonly blockSize: number,
    readonly cacheEnabled: boolean,
  ) {}

  /** Blocks a sequence needs for `tokens` tokens of prompt plus output. */
  blocksFor(tokens: number): number {
    return Math.ceil(tokens / this.blockSize);
  }

  /** Blocks neither held nor cached. */
  private freeBlocks(): number {
    return this.capacityBlocks - this.cached.size - this.anon;
  }

  /** Leading cached blocks of `keys` usable by a `promptTokens`-token prompt (≥ 1 token recomputed). */
  private leadingHits(keys: readonly number[], promptTokens: number): number {
    if (!this.cacheEnabled) return 0;
    const maxHits = Math.min(keys.length, Math.floor((promptTokens - 1) / this.blockSize));
    let n = 0;
    while (n < maxHits && this.cached.has(keys[n] as number)) n++;
    return n;
  }

  /**
   * Reserves blocks for a sequence: reuses the leading cached prompt blocks and takes the rest
   * (free first, then by evicting idle cached blocks LRU).
   * @param keys the prompt's chained block keys.
   * @param promptTokens prompt length in tokens.
   * @param totalBlocks blocks needed for prompt + output.
   * @returns the allocation, or null when the pool cannot hold it now (nothing changes then).
   */
  allocate(keys: readonly number[], promptTokens: number, totalBlocks: number): KvAllocation | null {
    const hits = this.leadingHits(keys, promptTokens);
    const hitKeys = keys.slice(0, hits);
    let idleHits = 0;
    for (const k of hitKeys) if (this.cached.get(k)?.refs === 0) idleHits++;
    const needed = totalBlocks - hits;
    if (needed > this.freeBlocks() + this.idle.size - idleHits) return null;
    for (const k of hitKeys) this.ref(k);
    this.evictUntilFree(needed);
    this.anon += needed;
    this.counters.queryTokens += promptTokens;
    this.counters.hitTokens += hits * this.blockSize;
    this.counters.queryBlocks += keys.length;
    this.counters.hitBlocks += hits;
    return { hitKeys, ownKeys: [], anonBlocks: needed };
  }

  /** Registers the prompt's computed full blocks (after prefill) so later prompts can reuse them. */
  commitPrompt(alloc: KvAllocation, keys: readonly number[]): void {
    if (!this.cacheEnabled) return;
    for (let i = alloc.hitKeys.length; i < keys.length && alloc.anonBlocks > 0; i++) {
      const k = keys[i] as number;
      if (this.cached.has(k)) continue;
      this.cached.set(k, { key: k, refs: 1, older: null, newer: null });
      this.referencedCached++;
      alloc.ownKeys.push(k);
      alloc.anonBlocks--;
      this.anon--;
    }
  }

  /** Returns a sequence's blocks: cached ones become idle (evictable), the rest free. */
  release(alloc: KvAllocation): void {
    for (const k of alloc.hitKeys) this.unref(k);
    for (const k of alloc.ownKeys) this.unref(k);
    this.anon -= alloc.anonBlocks;
    alloc.anonBlocks = 0;
    alloc.hitKeys.length = 0;
    alloc.ownKeys.length = 0;
  }

  private ref(key: number): void {
    const block = this.cached.get(key);
    if (block === undefined) return;
    if (block.refs === 0) {
      this.idle.remove(block);
      this.referencedCached++;
    }
    block.refs++;
  }

  private unref(key: number): void {
    const block = this.cached.get(key);
    if (block === undefined) return;
    block.refs--;
    if (block.refs === 0) {
      this.referencedCached--;
      this.idle.push(block);
    }
  }

  private evictUntilFree(needed: number): void {
    while (this.freeBlocks() < needed) {
      const oldest = this.idle.shift();
      if (oldest === null) return;
      this.cached.delete(oldest.key);
      this.counters.evictedBlocks++;
    }
  }

  /** Snapshot of the counters and occupancy. */
  stats(): KvPoolStats {
    return {
      ...this.counters,
      usedBlocks: this.referencedCached + this.anon,
      idleCachedBlocks: this.idle.size,
      capacityBlocks: this.capacityBlocks,
    };
  }
}
