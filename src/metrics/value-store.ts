/**
 * The raw values of one metric, kept for exact percentiles: 8 bytes a value in `Float64Array` chunks
 * outside the JS heap, which grow without copying what they hold. A JS `number[]` needs up to half
 * again its size while it grows, counts against the heap limit (~4 GB by default), and cannot hold
 * more than ~169 M values at all (V8 aborts the process): a long streamed run's
 * `inter_chunk_latency` (one value per chunk gap, ~375 M for 1 M requests of 376 tokens) is more.
 */

/** Values in the first chunk; each next chunk doubles, up to {@link MAX_CHUNK}. */
const FIRST_CHUNK = 256;
/** Largest chunk, values (8 MiB). */
const MAX_CHUNK = 1 << 20;

/** An append-only list of numbers (float64). */
export class ValueStore {
  private readonly full: Float64Array[] = [];
  private current = new Float64Array(FIRST_CHUNK);
  private fill = 0;
  /** Values held. */
  length = 0;

  /** Appends `value`. */
  push(value: number): void {
    if (this.fill === this.current.length) {
      this.full.push(this.current);
      this.current = new Float64Array(Math.min(this.current.length * 2, MAX_CHUNK));
      this.fill = 0;
    }
    this.current[this.fill++] = value;
    this.length++;
  }

  /** Calls `f` with each chunk's filled part, in order. */
  private forEachChunk(f: (values: Float64Array, at: number) => void): void {
    let at = 0;
    for (const chunk of this.full) {
      f(chunk, at);
      at += chunk.length;
    }
    f(this.current.subarray(0, this.fill), at);
  }

  /** Every value, ascending, in one new array (NaN last, as `Float64Array.prototype.sort` puts it). */
  sorted(): Float64Array {
    const out = new Float64Array(this.length);
    this.forEachChunk((values, at) => out.set(values, at));
    return out.sort();
  }

  /** Every value in the order pushed, as a new array. */
  toArray(): number[] {
    const out: number[] = [];
    this.forEachChunk((values) => {
      for (const v of values) out.push(v);
    });
    return out;
  }
}
