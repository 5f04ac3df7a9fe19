/**
 * Request timeouts with one timer per client instead of one `setTimeout` per request. In-flight
 * requests sit in a list ordered by deadline (monotonic ns, send stamp + timeout); inserting walks
 * back from the tail, so with one timeout for every request it is O(1), and removing is O(1).
 * A single Node timer is armed for the earliest deadline. Completed requests leave the list without
 * touching the timer, so under load it fires about once per timeout period, finds the head not yet
 * due and re-arms for it. When it fires it expires every entry whose deadline has passed on the
 * monotonic clock; Node timers run on a coarser cached clock and can fire up to ~1 ms early, so a
 * head that is not yet due re-arms the timer for the remainder. The timer keeps the process alive
 * only while the list is non-empty. Delays are capped at Node's maximum (2^31 − 1 ms) and re-armed.
 */

/** An entry of {@link Deadlines}; the link fields belong to the list. */
export interface Deadline {
  /** Monotonic ns at which the entry expires. */
  deadlineNs: number;
  /** Called once when the deadline has passed; the entry is already out of the list. */
  expire(): void;
  /** List links (owned by {@link Deadlines}; null outside the list). */
  prevDeadline: Deadline | null;
  nextDeadline: Deadline | null;
  /** True while the entry is in a list. */
  inDeadlines: boolean;
}

/** Node's largest timer delay, ms. */
const MAX_DELAY_MS = 2 ** 31 - 1;

/** The deadline list of one client and its timer. */
export class Deadlines {
  private head: Deadline | null = null;
  private tail: Deadline | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** Monotonic ns at which the armed timer is due; +Infinity when none is armed. */
  private timerDueNs = Number.POSITIVE_INFINITY;
  private readonly onTimer = (): void => this.fire();

  /** @param nowNs the monotonic ns clock deadlines are measured on */
  constructor(private readonly nowNs: () => number) {}

  /** Adds `entry` (its `deadlineNs` set); the timer is armed or re-armed if it becomes the earliest. */
  add(entry: Deadline): void {
    let after = this.tail;
    while (after !== null && after.deadlineNs > entry.deadlineNs) after = after.prevDeadline;
    const before = after === null ? this.head : after.nextDeadline;
    entry.prevDeadline = after;
    entry.nextDeadline = before;
    if (after === null) this.head = entry;
    else after.nextDeadline = entry;
    if (before === null) this.tail = entry;
    else before.prevDeadline = entry;
    entry.inDeadlines = true;
    if (entry.deadlineNs < this.timerDueNs) this.arm(entry.deadlineNs);
    else this.timer?.ref();
  }

  /** Removes `entry` if it is in the list; the timer stays armed but stops holding the process when empty. */
  remove(entry: Deadline): void {
    if (!entry.inDeadlines) return;
    entry.inDeadlines = false;
    const prev = entry.prevDeadline;
    const next = entry.nextDeadline;
    if (prev === null) this.head = next;
    else prev.nextDeadline = next;
    if (next === null) this.tail = prev;
    else next.prevDeadline = prev;
    entry.prevDeadline = null;
    entry.nextDeadline = null;
    if (this.head === null) this.timer?.unref();
  }

  /** Stops the timer (the client is closing); entries stay until removed. */
  close(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.timerDueNs = Number.POSITIVE_INFINITY;
  }

  private arm(dueNs: number): void {
    if (this.timer !== null) clearTimeout(this.timer);
    const now = this.nowNs();
    const delayMs = Math.min(MAX_DELAY_MS, Math.max(1, Math.ceil((dueNs - now) / 1e6)));
    this.timerDueNs = delayMs === MAX_DELAY_MS ? now + delayMs * 1e6 : dueNs;
    this.timer = setTimeout(this.onTimer, delayMs);
  }

  private fire(): void {
    this.timer = null;
    this.timerDueNs = Number.POSITIVE_INFINITY;
    const now = this.nowNs();
    let head = this.head;
    while (head !== null && head.deadlineNs <= now) {
      this.remove(head);
      head.expire();
      head = this.head;
    }
    if (head !== null) this.arm(head.deadlineNs);
  }
}
