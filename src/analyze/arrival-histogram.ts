/**
 * Arrival times of a trace read once, in file order, in bounded memory: the first and last stamp,
 * the longest gap between consecutive stamps, and a histogram of {@link FINE_BUCKETS} equal-width
 * buckets whose width doubles (neighbours merged) whenever a stamp falls past its end. The width
 * is then at most 2 × span / {@link FINE_BUCKETS}, so a share of the span (a 5 % window) is counted
 * to within one bucket.
 */

/** Buckets of the fine histogram (even, so neighbours merge in pairs). */
export const FINE_BUCKETS = 2048;

/** The longest stretch of a trace with nothing sent: between two consecutive rows (file order). */
export interface ArrivalGap {
  /** Length, trace ms. */
  gapMs: number;
  /** 1-based line of the row that ends the gap. */
  endLine: number;
}

/** Arrivals counted by equal windows of the span, in order. */
export interface WindowCounts {
  /** Width of one window, trace ms. */
  widthMs: number;
  counts: number[];
}

/** Collects arrival times (trace ms) in file order. */
export class ArrivalHistogram {
  private readonly buckets = new Array<number>(FINE_BUCKETS).fill(0);
  private widthMs = 1;
  private originMs: number | null = null;
  private lastMs = Number.NEGATIVE_INFINITY;
  private previousMs: number | null = null;
  /** Stamps added. */
  count = 0;
  /** Rows stamped before the row above them (file order not time order). */
  outOfOrder = 0;
  /** The longest gap between a row and the row above it; null before two rows. */
  longestGap: ArrivalGap | null = null;

  /** Adds one row's stamp (trace ms) read at `line`. */
  add(tsMs: number, line: number): void {
    this.count += 1;
    if (this.originMs === null) this.originMs = tsMs;
    if (this.previousMs !== null) {
      const gap = tsMs - this.previousMs;
      if (gap < 0) this.outOfOrder += 1;
      else if (this.longestGap === null || gap > this.longestGap.gapMs)
        this.longestGap = { gapMs: gap, endLine: line };
    }
    this.previousMs = tsMs;
    this.lastMs = Math.max(this.lastMs, tsMs);
    const offset = Math.max(0, tsMs - this.originMs);
    while (offset >= this.widthMs * FINE_BUCKETS) this.merge();
    const i = Math.floor(offset / this.widthMs);
    this.buckets[i] = (this.buckets[i] ?? 0) + 1;
  }

  /** First stamp read (the trace's start when rows are in time order); null before any. */
  get firstMs(): number | null {
    return this.originMs;
  }

  /** Last minus first stamp, trace ms (0 before two rows). */
  get spanMs(): number {
    return this.originMs === null ? 0 : Math.max(0, this.lastMs - this.originMs);
  }

  /** Arrivals in `n` equal windows of the span (each fine bucket counted in the window of its start). */
  windows(n: number): WindowCounts {
    const widthMs = this.spanMs / n;
    const counts = new Array<number>(n).fill(0);
    for (let i = 0; i < FINE_BUCKETS; i++) {
      const c = this.buckets[i] ?? 0;
      if (c === 0) continue;
      const w = widthMs === 0 ? 0 : Math.min(n - 1, Math.floor((i * this.widthMs) / widthMs));
      counts[w] = (counts[w] ?? 0) + c;
    }
    return { widthMs, counts };
  }

  private merge(): void {
    for (let i = 0; i < FINE_BUCKETS / 2; i++)
      this.buckets[i] = (this.buckets[2 * i] ?? 0) + (this.buckets[2 * i + 1] ?? 0);
    this.buckets.fill(0, FINE_BUCKETS / 2);
    this.widthMs *= 2;
  }
}
