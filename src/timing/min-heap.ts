/** A binary min-heap of timed waiters ordered by `targetNs`, ties in insertion order. */
export interface TimedEntry {
  targetNs: number;
  seq: number;
  resolve: () => void;
  /** Set by the owner when the waiter left early (e.g. aborted); {@link TimerHeap.peekLive} drops it. */
  cancelled?: boolean;
}

/** Min-heap keyed by (targetNs, seq). O(log n) push/pop. */
export class TimerHeap {
  private readonly items: TimedEntry[] = [];
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  /** Earliest entry, or undefined when empty. */
  peek(): TimedEntry | undefined {
    return this.items[0];
  }

  /** Adds a waiter for `targetNs`. */
  push(targetNs: number, resolve: () => void): TimedEntry {
    const entry = { targetNs, seq: this.seq++, resolve };
    this.items.push(entry);
    this.up(this.items.length - 1);
    return entry;
  }

  /** Earliest entry not marked `cancelled` (cancelled ones at the top are dropped), or undefined. */
  peekLive(): TimedEntry | undefined {
    let top = this.items[0];
    while (top?.cancelled === true) {
      this.pop();
      top = this.items[0];
    }
    return top;
  }

  /** Removes and returns the earliest entry. */
  pop(): TimedEntry | undefined {
    const top = this.items[0];
    const last = this.items.pop();
    if (top !== undefined && last !== undefined && this.items.length > 0) {
      this.items[0] = last;
      this.down(0);
    }
    return top;
  }

  private less(i: number, j: number): boolean {
    const a = this.items[i] as TimedEntry;
    const b = this.items[j] as TimedEntry;
    return a.targetNs < b.targetNs || (a.targetNs === b.targetNs && a.seq < b.seq);
  }

  private swap(i: number, j: number): void {
    const t = this.items[i] as TimedEntry;
    this.items[i] = this.items[j] as TimedEntry;
    this.items[j] = t;
  }

  private up(i: number): void {
    let k = i;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!this.less(k, parent)) break;
      this.swap(k, parent);
      k = parent;
    }
  }

  private down(i: number): void {
    let k = i;
    const n = this.items.length;
    for (;;) {
      const l = 2 * k + 1;
      const r = l + 1;
      let m = k;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === k) return;
      this.swap(k, m);
      k = m;
    }
  }
}
