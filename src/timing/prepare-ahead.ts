/**
 * Builds requests ahead of their send time so that synthesizing a 100k-token prompt never makes a
 * send late. Items are prepared in schedule order while the clock is still more than a safety
 * margin (twice the observed preparation time) before the next send is due, and only for items due
 * within the look-ahead window; the loop yields to the event loop between items so response
 * streams keep being read and stamped on time.
 */
import type { Clock } from './clock.js';
import type { PreparedSend } from './types.js';

/** Prepare-ahead queue over items 0..count-1 in schedule order. */
export class PrepareAhead {
  private readonly ready = new Map<number, PreparedSend>();
  private next = 0;
  /** Smoothed preparation time, ns. */
  private prepNs = 1e6;

  constructor(
    private readonly count: number,
    private readonly targetNs: (k: number) => number,
    private readonly prepare: (k: number) => PreparedSend,
    private readonly clock: Clock,
    private readonly lookaheadNs: number,
  ) {}

  /**
   * The prepared request for item `k` (built now if it was not built ahead), after using the time
   * left before item `k` is due to build later items.
   */
  async take(k: number): Promise<PreparedSend> {
    if (!this.ready.has(k)) this.build(k);
    const dueNs = this.targetNs(k);
    while (this.next < this.count) {
      const now = this.clock.nowNs();
      if (this.targetNs(this.next) > now + this.lookaheadNs) break;
      if (now + 2 * this.prepNs > dueNs) break;
      this.build(this.next);
      await yieldToEventLoop();
    }
    const prepared = this.ready.get(k) as PreparedSend;
    this.ready.delete(k);
    return prepared;
  }

  private build(k: number): void {
    const t0 = this.clock.nowNs();
    this.ready.set(k, this.prepare(k));
    this.next = Math.max(this.next, k + 1);
    const took = this.clock.nowNs() - t0;
    this.prepNs = 0.8 * this.prepNs + 0.2 * took;
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
