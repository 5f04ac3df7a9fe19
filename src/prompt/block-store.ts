/**
 * KV-cache block texts, one per hash id. A block of `n` tokens is `n` words drawn from a generator
 * seeded by (run seed, hash id); a shorter (partial last) block with the same id is a prefix of the
 * full one. Blocks are cached in a bounded two-generation cache (an approximate LRU with O(1)
 * operations), and re-generated identically after eviction, so memory stays bounded on long traces.
 *
 * Why not a `Map` kept in LRU order by delete-and-reinsert: evicting from the front of a V8 `Map`
 * leaves deleted slots that `keys().next()` walks over until the table is rebuilt, and with a
 * Bailian trace (16-token blocks, ~120 new ids per request) that made synthesis ~1 M tokens/s.
 */
import type { TraceId } from '../dataset/types.js';
import { rngFromIds, rngFromKey, type Uint32Source } from '../util/rng.js';

/** Default number of cached block texts (about 3.5 KB each at 512 tokens). */
export const DEFAULT_BLOCK_CACHE_ENTRIES = 32_768;

/**
 * Default bound on the characters of the cached block texts: 48 Mi (48 MiB, the texts being ASCII).
 * The entry bound alone let 512-token Mooncake blocks fill ~140 MB of heap; this one keeps ~14,000 of
 * them (reuse within that distance is most of the reuse in the public Mooncake trace) while the
 * entry bound still applies to small blocks (16-token Bailian blocks are ~110 characters each).
 */
export const DEFAULT_BLOCK_CACHE_CHARS = 48 * 2 ** 20;

/** At most this many distinct ids seen at two sizes are remembered (and counted). */
export const MAX_CONFLICT_IDS = 65_536;

/** Generates and caches block texts. */
export class BlockStore {
  /** Blocks used since the last generation switch. */
  private recent = new Map<TraceId, CachedBlock>();
  /** Characters of the texts in `recent`. */
  private recentChars = 0;
  /** The generation before; a hit moves the block to `recent`. */
  private older = new Map<TraceId, CachedBlock>();
  /**
   * Distinct hash ids asked for at another size than the one they were cached at (a sign of a wrong
   * `--isl-block-size`), at most {@link MAX_CONFLICT_IDS} of them. Checked against the cache, so an id
   * is compared only while it is cached (the last ~{@link DEFAULT_BLOCK_CACHE_ENTRIES} blocks used): a
   * table of every id ever seen grew to a million entries on a long trace and cost more than
   * generating the text.
   */
  private readonly conflictIds = new Set<TraceId>();

  /**
   * @param words single-token words (with leading space) to draw from
   * @param seed run seed (`--random-seed`); the same seed gives the same text
   * @param maxEntries LRU capacity in blocks
   * @param maxChars LRU capacity in characters of block text
   */
  constructor(
    private readonly words: readonly string[],
    private readonly seed: number,
    private readonly maxEntries: number = DEFAULT_BLOCK_CACHE_ENTRIES,
    private readonly maxChars: number = DEFAULT_BLOCK_CACHE_CHARS,
  ) {}

  /** Distinct hash ids seen at two sizes since the last {@link BlockStore.resetSizeConflicts} (capped). */
  get sizeConflicts(): number {
    return this.conflictIds.size;
  }

  /** Forgets the ids seen at two sizes (after the client warm-up, whose prompts are not the run's). */
  resetSizeConflicts(): void {
    this.conflictIds.clear();
  }

  /** Text of `tokens` words for hash id `hashId` (tokens ≥ 1; a 64-bit id beyond 2^53 − 1 as a bigint). */
  block(hashId: TraceId, tokens: number): string {
    const hit = this.lookup(hashId);
    if (hit !== undefined && hit.tokens !== tokens && this.conflictIds.size < MAX_CONFLICT_IDS)
      this.conflictIds.add(hashId);
    if (hit !== undefined && hit.tokens >= tokens) {
      return tokens === hit.tokens ? hit.text : prefixWords(hit.text, tokens);
    }
    const text = this.draw(rngFromIds(this.seed, hashId), tokens);
    this.insert(hashId, { text, tokens });
    return text;
  }

  /** True when the block of `hashId` is cached with at least `tokens` words (the cache is not touched). */
  isCached(hashId: TraceId, tokens: number): boolean {
    const hit = this.recent.get(hashId) ?? this.older.get(hashId);
    return hit !== undefined && hit.tokens >= tokens;
  }

  /** Fresh, uncached text of `tokens` words for a unique key (prompt tails, id-less prompts). */
  fresh(key: string, tokens: number): string {
    return this.draw(this.freshSource(key), tokens);
  }

  /**
   * The word source of {@link BlockStore.fresh} for `key`: `draw(source, a)` then `draw(source, b)`
   * give the text of `fresh(key, a + b)` in two pieces.
   */
  freshSource(key: string): Uint32Source {
    return rngFromKey(`${this.seed}:fresh:${key}`);
  }

  /** Cached block of `hashId`, moved to the recent generation when found in the older one. */
  private lookup(hashId: TraceId): CachedBlock | undefined {
    const recent = this.recent.get(hashId);
    if (recent !== undefined) return recent;
    const older = this.older.get(hashId);
    if (older !== undefined) {
      this.older.delete(hashId);
      this.insert(hashId, older);
    }
    return older;
  }

  /** Adds to the recent generation; at half the capacity (entries or characters) the older one is dropped. */
  private insert(hashId: TraceId, block: CachedBlock): void {
    this.recent.set(hashId, block);
    this.recentChars += block.text.length;
    if (this.recent.size >= Math.max(1, this.maxEntries >> 1) || this.recentChars >= this.maxChars / 2) {
      this.older = this.recent;
      this.recent = new Map();
      this.recentChars = 0;
    }
  }

  /** The next `tokens` words drawn from `next`, as one text. */
  draw(next: Uint32Source, tokens: number): string {
    const n = this.words.length;
    const parts = new Array<string>(tokens);
    for (let i = 0; i < tokens; i++) parts[i] = this.words[next() % n] as string;
    return parts.join('');
  }
}

interface CachedBlock {
  text: string;
  tokens: number;
}

/** The first `words` words of a block text (each word starts with one space). */
function prefixWords(text: string, words: number): string {
  let seen = 0;
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) === 32) {
      if (seen === words) return text.slice(0, i);
      seen++;
    }
  }
  return text;
}
