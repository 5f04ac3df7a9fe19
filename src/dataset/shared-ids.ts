/**
 * The shared hash ids of a trace, for trace synthesis: the ids that occur more than once among the
 * kept rows' `hash_ids` (every occurrence counts, in one row or several: AIPerf's synthesizer counts
 * ids the same way, `src/aiperf/dataset/synthesis/synthesizer.py`). A row's leading run of shared ids
 * is its prefix (dataset/block-scale.ts).
 *
 * Built in one pass over the rows, before any row is rewritten: from the rows already in memory for a
 * whole-file load, or by reading the file once more, streaming, for a streamed replay and
 * `synthesize-trace`. Memory: an open-addressing table of typed arrays (low and high 32 bits of each
 * id, a count capped at 2), 9 bytes a slot, at most half full: 18 to 36 bytes per distinct id, whatever
 * the ids' size (64-bit ids included); nothing per row.
 */
import { fmix32 } from '../util/fmix32.js';
import type { TraceId } from './types.js';

/** Slots of a new table (a power of two). */
const INITIAL_SLOTS = 1 << 12;

/** Counts of hash ids, capped at 2: which ids of a trace are shared. */
export class SharedIds {
  private lo = new Uint32Array(INITIAL_SLOTS);
  private hi = new Uint32Array(INITIAL_SLOTS);
  /** 0 empty slot, 1 seen once, 2 seen twice or more. */
  private count = new Uint8Array(INITIAL_SLOTS);
  private used = 0;

  /** Distinct ids counted. */
  get size(): number {
    return this.used;
  }

  /** Bytes the table holds (its typed arrays). */
  get bytes(): number {
    return this.count.length * 9;
  }

  /** Counts one occurrence of `id`. */
  add(id: TraceId): void {
    const [lo, hi] = halves(id);
    const slot = this.find(lo, hi);
    const c = this.count[slot] as number;
    if (c === 0) {
      this.lo[slot] = lo;
      this.hi[slot] = hi;
      this.count[slot] = 1;
      this.used += 1;
      if (this.used * 2 > this.count.length) this.grow();
    } else if (c === 1) this.count[slot] = 2;
  }

  /** True when `id` occurred more than once. */
  isShared(id: TraceId): boolean {
    const [lo, hi] = halves(id);
    return this.count[this.find(lo, hi)] === 2;
  }

  /** The slot holding (lo, hi), or the empty slot where it goes (linear probing). */
  private find(lo: number, hi: number): number {
    const mask = this.count.length - 1;
    let slot = fmix32((lo ^ fmix32(hi ^ 0x9e3779b9)) >>> 0) & mask;
    while (this.count[slot] !== 0 && (this.lo[slot] !== lo || this.hi[slot] !== hi)) slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { lo, hi, count } = this;
    this.lo = new Uint32Array(count.length * 2);
    this.hi = new Uint32Array(count.length * 2);
    this.count = new Uint8Array(count.length * 2);
    for (let i = 0; i < count.length; i += 1) {
      if (count[i] === 0) continue;
      const slot = this.find(lo[i] as number, hi[i] as number);
      this.lo[slot] = lo[i] as number;
      this.hi[slot] = hi[i] as number;
      this.count[slot] = count[i] as number;
    }
  }
}

/** Low and high 32 bits of an id (0 … 2^64 − 1). */
function halves(id: TraceId): [number, number] {
  if (typeof id === 'bigint') return [Number(id & 0xffffffffn), Number((id >> 32n) & 0xffffffffn)];
  return [id >>> 0, Math.floor(id / 4294967296) >>> 0];
}
