/**
 * The ideal prefix cache: an infinite, never-evicting cache of prompt blocks, chained from block 0
 * (the definition in prefix-analysis.ts). `analyze` runs it over a whole trace; a run feeds it each
 * request as it is sent, so every record knows how many of its prompt tokens such a cache would
 * already hold (`ideal_cached_tokens`).
 *
 * Memory: a chain of blocks is one 64-bit key per block (a hash of the previous key and the block's
 * id), kept in an open-addressing table (8 bytes of key and 8 of time per slot, at most half full),
 * so a long replay costs at most 64 bytes per distinct block (right after the table doubled; 32 as
 * it fills) instead of a `Map` entry (which also stops at 2^24 entries). Two different chains share
 * a key with probability about n²/2^65 for n blocks.
 */

/** One block of a prompt: its id (a trace hash id, or a string for a prompt's own fresh tail) and its tokens. */
export interface CacheBlock {
  id: number | bigint | string;
  tokens: number;
}

/** What {@link IdealPrefixCache.admit} found: the leading blocks (and their tokens) seen before. */
export interface PrefixHit {
  blocks: number;
  tokens: number;
}

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

/**
 * Default bound of a run's cache: 2^22 distinct blocks (67M tokens of 16-token blocks, 2G of 512), a
 * table of 2^23 slots, 128 MiB, at most.
 */
export const DEFAULT_IDEAL_CACHE_BLOCKS = 2 ** 22;

const MIN_SLOTS = 1024;

/** MurmurHash3 fmix32: a bijective avalanche of a uint32. */
function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** MurmurHash3 32-bit block step: mixes word `w` into state `h`. */
function absorb(h: number, w: number): number {
  let k = Math.imul(w, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  let x = h ^ Math.imul(k, 0x1b873593);
  x = (x << 13) | (x >>> 19);
  return (Math.imul(x, 5) + 0xe6546b64) | 0;
}

/** One 32-bit lane of the chain hash over four words, seeded by `seed` (MurmurHash3 over 16 bytes). */
function lane(seed: number, a: number, b: number, c: number, d: number): number {
  return fmix32((absorb(absorb(absorb(absorb(seed, a), b), c), d) ^ 16) >>> 0);
}

/** The two 32-bit words of an id: an integer below 2^64 split into low and high parts; a string hashed. */
function idWords(id: number | bigint | string): [number, number] {
  if (typeof id === 'number') return [id >>> 0, Math.floor(id / 4294967296) >>> 0];
  if (typeof id === 'bigint') return [Number(BigInt.asUintN(32, id)), Number(BigInt.asUintN(32, id >> 32n))];
  // Strings (tails) get a tag in the high bits' lane so that no string equals a number id.
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x85ebca6b) ^ (h2 >>> 15);
  }
  return [fmix32(h1 >>> 0), fmix32((h2 ^ 0x5bd1e995) >>> 0)];
}

/** One prompt admitted to an {@link IdealPrefixCache}. */
export interface Admission {
  /** Leading blocks (and their tokens) that prompts admitted before this one had. */
  readonly hit: PrefixHit;
  /**
   * The hits against every prompt admitted before `sentNs`, the moment this one was on the wire:
   * `hit`, extended by blocks that a prompt admitted after this one (started later) but before it was
   * on the wire also had, since two requests started a fraction of a millisecond apart reach the
   * server in either order. `sentNs` null (never on the wire): `hit`. Same clock as the admission's.
   */
  settle(sentNs: number | null): PrefixHit;
}

/** Chain keys, two words per block, of a prompt's blocks from its first miss on, with their tokens. */
interface PendingBlocks {
  keys: number[];
  tokens: number[];
}

/**
 * An infinite prefix cache of block chains (bounded only by `maxBlocks`). Not thread-safe.
 */
export class IdealPrefixCache {
  /** Key halves by slot; a slot holding (0, 0) is empty (a key that hashes to it is stored as (0, 1)). */
  private hi = new Uint32Array(MIN_SLOTS);
  private lo = new Uint32Array(MIN_SLOTS);
  /** When a second prompt admitted the slot's block (Infinity until one did); admission clock. */
  private second = new Float64Array(MIN_SLOTS).fill(Number.POSITIVE_INFINITY);
  /** Distinct chained blocks held. */
  size = 0;
  /** True once `maxBlocks` blocks are held: later {@link admit} calls answer null and record nothing. */
  full = false;

  /** @param maxBlocks distinct blocks kept at most (Infinity: grow until memory runs out). */
  constructor(private readonly maxBlocks: number = DEFAULT_IDEAL_CACHE_BLOCKS) {}

  /**
   * Admits a prompt made of `blocks` at `atNs` (calls in time order): finds the leading blocks that
   * earlier admitted prompts already had, chained from block 0, then records every block. Null
   * (nothing more recorded) once the cache is full, since from then on a hit could be missed.
   */
  admit(blocks: readonly CacheBlock[], atNs: number): Admission | null {
    if (this.full) return null;
    const hit: PrefixHit = { blocks: 0, tokens: 0 };
    const pending: PendingBlocks = { keys: [], tokens: [] };
    let h1 = 0;
    let h2 = 0;
    for (const block of blocks) {
      const [a, b] = idWords(block.id);
      const n1 = lane(0x9747b28c, h1, h2, a, b);
      h2 = lane(0x3c6ef372, h2, h1, b, a);
      h1 = n1;
      const k2 = h1 === 0 && h2 === 0 ? 1 : h2;
      const seen = this.insert(h1, k2, atNs);
      if (seen && pending.tokens.length === 0) {
        hit.blocks++;
        hit.tokens += block.tokens;
      } else {
        pending.keys.push(h1, k2);
        pending.tokens.push(block.tokens);
      }
      if (this.full) return null;
    }
    return { hit, settle: (sentNs) => this.settle(hit, pending, sentNs) };
  }

  private settle(hit: PrefixHit, pending: PendingBlocks, sentNs: number | null): PrefixHit {
    const settled = { ...hit };
    for (let j = 0; sentNs !== null && j < pending.tokens.length; j++) {
      const slot = this.slotOf(pending.keys[2 * j] as number, pending.keys[2 * j + 1] as number);
      if (slot < 0 || !((this.second[slot] as number) < sentNs)) break;
      settled.blocks++;
      settled.tokens += pending.tokens[j] as number;
    }
    return settled;
  }

  /** The slot holding the key, or −1. */
  private slotOf(k1: number, k2: number): number {
    const mask = this.hi.length - 1;
    for (
      let i = (k1 ^ Math.imul(k2, 0x9e3779b1)) & mask;
      this.hi[i] !== 0 || this.lo[i] !== 0;
      i = (i + 1) & mask
    ) {
      if (this.hi[i] === k1 && this.lo[i] === k2) return i;
    }
    return -1;
  }

  /** Adds the key admitted at `atNs` (true when it was already there; then notes a second admission). */
  private insert(k1: number, k2: number, atNs: number): boolean {
    const mask = this.hi.length - 1;
    let i = (k1 ^ Math.imul(k2, 0x9e3779b1)) & mask;
    while (this.hi[i] !== 0 || this.lo[i] !== 0) {
      if (this.hi[i] === k1 && this.lo[i] === k2) {
        if (this.second[i] === Number.POSITIVE_INFINITY) this.second[i] = atNs;
        return true;
      }
      i = (i + 1) & mask;
    }
    this.hi[i] = k1;
    this.lo[i] = k2;
    this.size++;
    if (this.size >= this.maxBlocks) this.full = true;
    else if (this.size * 2 > this.hi.length) this.grow();
    return false;
  }

  private grow(): void {
    const { hi, lo, second } = this;
    this.hi = new Uint32Array(hi.length * 2);
    this.lo = new Uint32Array(hi.length * 2);
    this.second = new Float64Array(hi.length * 2).fill(Number.POSITIVE_INFINITY);
    this.size = 0;
    for (let i = 0; i < hi.length; i++) {
      if (hi[i] === 0 && lo[i] === 0) continue;
      const slot = this.place(hi[i] as number, lo[i] as number);
      this.second[slot] = second[i] as number;
    }
  }

  /** Puts a key known to be absent into the first free slot of its probe sequence. */
  private place(k1: number, k2: number): number {
    const mask = this.hi.length - 1;
    let i = (k1 ^ Math.imul(k2, 0x9e3779b1)) & mask;
    while (this.hi[i] !== 0 || this.lo[i] !== 0) i = (i + 1) & mask;
    this.hi[i] = k1;
    this.lo[i] = k2;
    this.size++;
    return i;
  }
}
