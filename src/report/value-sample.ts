/**
 * A bounded, deterministic sample of a long stream of values (every inter-chunk latency of a run:
 * one per chunk, hundreds per request), so the report draws their distribution in fixed memory. It
 * keeps every `stride`-th value in arrival order; when it holds twice its cap it keeps every other
 * one and doubles the stride. The same run always yields the same sample.
 */

/** Default most values kept (and at least half of it once exceeded). */
export const VALUE_SAMPLE_CAP = 100_000;

/** What a sample holds: the kept values and how many it was offered. */
export interface SampledValues {
  /** Kept values, in arrival order. */
  values: number[];
  /** Values offered (finite ones), kept or not. */
  total: number;
}

/** Keeps every `stride`-th offered value, halving what it holds at `2 × cap`. */
export class ValueSample {
  private readonly kept: number[] = [];
  private stride = 1;
  private total = 0;

  constructor(private readonly cap: number = VALUE_SAMPLE_CAP) {}

  /** Offers one value; non-finite values are ignored. */
  add(value: number): void {
    if (!Number.isFinite(value)) return;
    if (this.total % this.stride === 0) {
      this.kept.push(value);
      if (this.kept.length >= 2 * this.cap) this.halve();
    }
    this.total += 1;
  }

  private halve(): void {
    let w = 0;
    for (let r = 0; r < this.kept.length; r += 2) this.kept[w++] = this.kept[r] as number;
    this.kept.length = w;
    this.stride *= 2;
  }

  /** The values kept and the count offered. */
  result(): SampledValues {
    return { values: this.kept, total: this.total };
  }
}
