/**
 * Sessions of a fixed-schedule replay waiting for their first send, ordered by (first-turn
 * timestamp, arrival). A sorted array with a moving head: a trace read in timestamp order appends
 * at the end in O(1); an out-of-order arrival is inserted in place (binary search). Entries before
 * {@link StartQueue.preparedUpTo} have been offered to the prepare-ahead step.
 */

/** One waiting session start. */
export interface QueuedStart<S> {
  /** First-turn timestamp in trace ms (after speedup). */
  tsMs: number;
  /** Arrival number, the tie-break. */
  seq: number;
  session: S;
}

/** Sorted queue of session starts. */
export class StartQueue<S> {
  private items: QueuedStart<S>[] = [];
  private head = 0;
  /** Index (absolute, ≥ head) of the first entry not yet offered to prepare-ahead. */
  private prepared = 0;

  /** Entries waiting. */
  get size(): number {
    return this.items.length - this.head;
  }

  /** Earliest entry, or undefined. */
  peek(): QueuedStart<S> | undefined {
    return this.items[this.head];
  }

  /** Adds an entry in (tsMs, seq) order; returns true when it went before an entry already queued. */
  push(entry: QueuedStart<S>): boolean {
    const last = this.items[this.items.length - 1];
    if (this.size === 0 || last === undefined || !before(entry, last)) {
      this.items.push(entry);
      return false;
    }
    let lo = this.head;
    let hi = this.items.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(entry, this.items[mid] as QueuedStart<S>)) hi = mid;
      else lo = mid + 1;
    }
    this.items.splice(lo, 0, entry);
    if (lo < this.prepared) this.prepared++;
    return true;
  }

  /** Removes and returns the earliest entry. */
  shift(): QueuedStart<S> | undefined {
    const top = this.items[this.head];
    if (top === undefined) return undefined;
    this.items[this.head] = undefined as unknown as QueuedStart<S>;
    this.head++;
    if (this.prepared < this.head) this.prepared = this.head;
    if (this.head > 1024 && this.head * 2 > this.items.length) this.compact();
    return top;
  }

  /** The next entry not yet offered to prepare-ahead (marks it offered), or undefined. */
  nextToPrepare(): QueuedStart<S> | undefined {
    const entry = this.items[this.prepared];
    if (entry !== undefined) this.prepared++;
    return entry;
  }

  /** The next entry not yet offered to prepare-ahead, without marking it. */
  peekToPrepare(): QueuedStart<S> | undefined {
    return this.items[this.prepared];
  }

  private compact(): void {
    this.items = this.items.slice(this.head);
    this.prepared -= this.head;
    this.head = 0;
  }
}

function before<S>(a: QueuedStart<S>, b: QueuedStart<S>): boolean {
  return a.tsMs < b.tsMs || (a.tsMs === b.tsMs && a.seq < b.seq);
}
