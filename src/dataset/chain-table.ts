/**
 * The table behind the ideal prefix cache (prefix-chain.ts): a set of 64-bit block-chain keys in open
 * addressing (two `Uint32Array`s of key halves, a `Float64Array` of times and two `Uint32Array`s of
 * tokens, at most half full), so a long replay costs 24 bytes per slot, 48 to 96 per distinct block,
 * instead of a `Map` entry (which
 * also stops at 2^24 entries). A chain's key at block i is a hash of the key at block i − 1 and block
 * i's id; two different chains share a key with probability about n²/2^65 for n blocks.
 */
import { fmix32 } from '../util/fmix32.js';

const MIN_SLOTS = 1024;

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

/** The low 32 bits of an id (an integer below 2^64; a string is hashed). */
function idLow(id: number | bigint | string): number {
  if (typeof id === 'number') return id >>> 0;
  if (typeof id === 'bigint') return Number(BigInt.asUintN(32, id));
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return fmix32(h >>> 0);
}

/** The high 32 bits of an id; a string gets a second, differently seeded hash. */
function idHigh(id: number | bigint | string): number {
  if (typeof id === 'number') return Math.floor(id / 4294967296) >>> 0;
  if (typeof id === 'bigint') return Number(BigInt.asUintN(32, id >> 32n));
  let h = 0x9e3779b9;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x85ebca6b) ^ (h >>> 15);
  return fmix32((h ^ 0x5bd1e995) >>> 0);
}

/**
 * The chain keys of `ids`, two words per id (`out[2i]`, `out[2i + 1]`), never both 0. Equal id
 * sequences give equal keys; an integer id equals the same integer given as a bigint.
 */
export function chainKeys(ids: readonly (number | bigint | string)[]): Uint32Array {
  const out = new Uint32Array(ids.length * 2);
  let h1 = 0;
  let h2 = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i] as number | bigint | string;
    const a = idLow(id);
    const b = idHigh(id);
    const n1 = lane(0x9747b28c, h1, h2, a, b);
    h2 = lane(0x3c6ef372, h2, h1, b, a);
    h1 = n1;
    out[2 * i] = h1;
    out[2 * i + 1] = h1 === 0 && h2 === 0 ? 1 : h2;
  }
  return out;
}

/**
 * A set of chain keys, each with the tokens of its block held (the most any prompt sent: a block
 * first sent partial holds only those tokens) and the time and tokens of the second prompt that added
 * it. Not thread-safe.
 */
export class ChainTable {
  /** Key halves by slot; (0, 0) is an empty slot. */
  private hi = new Uint32Array(MIN_SLOTS);
  private lo = new Uint32Array(MIN_SLOTS);
  /** Tokens of the slot's block held so far. */
  private held = new Uint32Array(MIN_SLOTS);
  /** When a second prompt added the slot's key (Infinity until one did). */
  private second = new Float64Array(MIN_SLOTS).fill(Number.POSITIVE_INFINITY);
  /** Tokens of the block that second prompt sent. */
  private secondHeld = new Uint32Array(MIN_SLOTS);
  /** Distinct keys held. */
  size = 0;

  /**
   * Adds the key, added by a prompt at `atNs` sending `tokens` of its block (calls in time order):
   * returns the tokens held before (−1 when the key was absent), and then holds the larger of the
   * two. The first call on a present key keeps its `atNs` and `tokens` as the second admission.
   */
  add(k1: number, k2: number, atNs: number, tokens: number): number {
    const slot = this.slotOf(k1, k2);
    if (slot >= 0) {
      const before = this.held[slot] as number;
      if (this.second[slot] === Number.POSITIVE_INFINITY) {
        this.second[slot] = atNs;
        this.secondHeld[slot] = tokens;
      }
      if (tokens > before) this.held[slot] = tokens;
      return before;
    }
    this.place(k1, k2, tokens, Number.POSITIVE_INFINITY, 0);
    if (this.size * 2 > this.hi.length) this.grow();
    return -1;
  }

  /** When a second prompt added the key (Infinity when none did, or the key is absent). */
  secondOf(k1: number, k2: number): number {
    const slot = this.slotOf(k1, k2);
    return slot < 0 ? Number.POSITIVE_INFINITY : (this.second[slot] as number);
  }

  /** The tokens of the key's block that the second prompt to add it sent (0 when none did). */
  secondTokensOf(k1: number, k2: number): number {
    const slot = this.slotOf(k1, k2);
    return slot < 0 ? 0 : (this.secondHeld[slot] as number);
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

  /** Puts a key known to be absent into the first free slot of its probe sequence. */
  private place(k1: number, k2: number, held: number, second: number, secondHeld: number): void {
    const mask = this.hi.length - 1;
    let i = (k1 ^ Math.imul(k2, 0x9e3779b1)) & mask;
    while (this.hi[i] !== 0 || this.lo[i] !== 0) i = (i + 1) & mask;
    this.hi[i] = k1;
    this.lo[i] = k2;
    this.held[i] = held;
    this.second[i] = second;
    this.secondHeld[i] = secondHeld;
    this.size++;
  }

  private grow(): void {
    const { hi, lo, held, second, secondHeld } = this;
    const slots = hi.length * 2;
    this.hi = new Uint32Array(slots);
    this.lo = new Uint32Array(slots);
    this.held = new Uint32Array(slots);
    this.second = new Float64Array(slots).fill(Number.POSITIVE_INFINITY);
    this.secondHeld = new Uint32Array(slots);
    this.size = 0;
    for (let i = 0; i < hi.length; i++) {
      if (hi[i] === 0 && lo[i] === 0) continue;
      this.place(
        hi[i] as number,
        lo[i] as number,
        held[i] as number,
        second[i] as number,
        secondHeld[i] as number,
      );
    }
  }
}
