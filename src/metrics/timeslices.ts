/**
 * Time slices (`--slice-duration`; AIPerf "Time Slicing", docs/tutorials/timeslices.md, and its
 * metrics accumulator): the run's records summarized again in consecutive windows of equal length.
 *
 * - The grid starts at the earliest request start of the run (failed requests included) and runs in
 *   steps of the slice length; a record belongs to the window its request started in, `[start, end)`.
 * - The run ends at the latest request start or end of any record. The last window is cut there and
 *   marked incomplete when the run ended before the window would have.
 * - A window in which no request started is left out; the slices that remain are numbered 0, 1, … in
 *   time order, and each carries its own bounds.
 * - Each slice is a {@link Summary} of its records with the run's own code ({@link SummaryBuilder}):
 *   the same per-record statistics, counts (failed requests included) and, over the slice's window
 *   (not its records' span), the rates and `benchmark_duration`.
 */
import type { LineRecord } from '../record/types.js';
import { type SummarizeOptions, type Summary, SummaryBuilder } from './summary.js';

/**
 * The 0-based window of a request that started at `startNs` on a grid from `originNs` in steps of
 * `sliceNs` (same clock, ns): `floor((startNs − originNs) / sliceNs)`, so a start exactly on a
 * boundary opens the next window. Negative before the origin.
 */
export function sliceIndexOf(startNs: number, originNs: number, sliceNs: number): number {
  return Math.floor((startNs - originNs) / sliceNs);
}

/** One time slice: its window and the summary of the records that started in it. */
export interface Timeslice {
  /** Position among the slices that have records, 0-based, in time order. */
  index: number;
  /** Window index on the grid (0 = the one the first request started in); gaps are empty windows. */
  gridIndex: number;
  /** Window start, on the records' clock (ns). */
  startNs: number;
  /** Window end, on the records' clock (ns): start + slice length, or the run's end for a cut last window. */
  endNs: number;
  /** False when the run ended before the window would have (the last one); else true. */
  isComplete: boolean;
  summary: Summary;
}

/** Options of a {@link TimesliceBuilder}. */
export interface TimesliceOptions {
  /** Slice length, ns (> 0). */
  sliceNs: number;
  /** The grid's start, on the records' clock (ns): the run's earliest request start. */
  originNs: number;
  /** Options every slice's summary is built with (goodput SLOs, the usage check's overhead). */
  summarize?: SummarizeOptions;
}

/** Groups records into time slices as they are added; {@link TimesliceBuilder.build} summarizes each. */
export class TimesliceBuilder {
  /** One summary builder per grid window that has records: the values, never the records. */
  private readonly slices = new Map<number, SummaryBuilder>();
  private runEndNs: number | null = null;

  /** @throws {RangeError} for a slice length that is not a positive finite number. */
  constructor(private readonly opts: TimesliceOptions) {
    if (!(opts.sliceNs > 0 && Number.isFinite(opts.sliceNs)))
      throw new RangeError(`slice length must be a positive number of ns, got ${opts.sliceNs}`);
  }

  /**
   * Adds one record to the window its request started in.
   * @throws {RangeError} for a record that started before the grid's origin.
   */
  add(record: LineRecord): void {
    const { startNs, endNs } = record.raw;
    const at = sliceIndexOf(startNs, this.opts.originNs, this.opts.sliceNs);
    if (at < 0)
      throw new RangeError(`a request started ${this.opts.originNs - startNs} ns before the slices' origin`);
    const end = Math.max(startNs, endNs);
    this.runEndNs = this.runEndNs === null ? end : Math.max(this.runEndNs, end);
    let slice = this.slices.get(at);
    if (slice === undefined) {
      slice = new SummaryBuilder(this.opts.summarize);
      this.slices.set(at, slice);
    }
    slice.add(record);
  }

  /** The slices with records, in time order (empty with no records). */
  build(): Timeslice[] {
    const runEnd = this.runEndNs;
    if (runEnd === null) return [];
    const grid = [...this.slices.keys()].sort((a, b) => a - b);
    return grid.map((gridIndex, index) => {
      const startNs = this.opts.originNs + gridIndex * this.opts.sliceNs;
      const fullEndNs = startNs + this.opts.sliceNs;
      const isComplete = fullEndNs <= runEnd;
      const endNs = isComplete ? fullEndNs : Math.max(runEnd, startNs);
      const slice = this.slices.get(gridIndex) as SummaryBuilder;
      const summary = slice.build(endNs > startNs ? { startNs, endNs } : undefined);
      return { index, gridIndex, startNs, endNs, isComplete, summary };
    });
  }
}
