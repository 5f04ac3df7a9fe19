/**
 * KV-cache block texts, one per hash id. A block of `n` tokens is `n` words drawn from a generator
 * seeded by (run seed, hash id); a shorter (partial last) block with the same id is a prefix of the
 * full one. Blocks are cached in a bounded LRU, and re-generated identically after eviction, so
 * memory stays bounded on long traces.
 */
import { rngFromKey } from './rng.js';

/** Default number of cached block texts (about 3.5 KB each at 512 tokens). */
export const DEFAULT_BLOCK_CACHE_ENTRIES = 32_768;

/** Generates and caches block texts. */
export class BlockStore {
  private readonly cache = new Map<number, { text: string; tokens: number }>();
  /** Hash ids first seen at one size and later at another (a sign of a wrong `--isl-block-size`). */
  sizeConflicts = 0;
  private readonly sizes = new Map<number, number>();

  /**
   * @param words single-token words (with leading space) to draw from
   * @param seed run seed (`--random-seed`); the same seed gives the same text
   * @param maxEntries LRU capacity in blocks
   */
  constructor(
    private readonly words: readonly string[],
    private readonly seed: number,
    private readonly maxEntries: number = DEFAULT_BLOCK_CACHE_ENTRIES,
  ) {}

  /** Text of `tokens` words for hash id `hashId` (tokens ≥ 1). */
  block(hashId: number, tokens: number): string {
    this.noteSize(hashId, tokens);
    const hit = this.cache.get(hashId);
    if (hit !== undefined && hit.tokens >= tokens) {
      this.cache.delete(hashId);
      this.cache.set(hashId, hit);
      return tokens === hit.tokens ? hit.text : prefixWords(hit.text, tokens);
    }
    const text = this.generate(`${this.seed}:block:${hashId}`, tokens);
    this.cache.delete(hashId);
    this.cache.set(hashId, { text, tokens });
    if (this.cache.size > this.maxEntries) {
      const oldest = this.cache.keys().next().value;
      if (oldest !== undefined) this.cache.delete(oldest);
    }
    return text;
  }

  /** Fresh, uncached text of `tokens` words for a unique key (prompt tails, id-less prompts). */
  fresh(key: string, tokens: number): string {
    return this.generate(`${this.seed}:fresh:${key}`, tokens);
  }

  private generate(key: string, tokens: number): string {
    const next = rngFromKey(key);
    const n = this.words.length;
    const parts = new Array<string>(tokens);
    for (let i = 0; i < tokens; i++) parts[i] = this.words[next() % n] as string;
    return parts.join('');
  }

  private noteSize(hashId: number, tokens: number): void {
    const seen = this.sizes.get(hashId);
    if (seen === undefined) {
      if (this.sizes.size < 1_000_000) this.sizes.set(hashId, tokens);
    } else if (seen !== tokens) {
      this.sizeConflicts++;
    }
  }
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
