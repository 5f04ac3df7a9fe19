/**
 * The wall-time {@link Clock}: every waiter in one heap; everything due is released together
 * (dispatch all that is due).
 *
 * Node timers have 1 ms granularity: they cannot wait less than 1 ms, and may fire up to ~1 ms early
 * or late against `performance.now()`. How the final stretch before a target is covered depends on
 * the precision:
 * - `timer` (default): a helper thread ({@link WakeThread}) wakes the event loop at the target and
 *   the main thread releases what is due then, so it sleeps in its I/O wait until the target and
 *   never polls; one ordinary timer set just after the target guards liveness. Without worker
 *   threads, the last millisecond is polled (never a 1 ms timer for a shorter wait, which would
 *   overshoot).
 * - `spin`: `setImmediate` polling for the final `spinNs` before every target (sub-millisecond
 *   sends at the cost of one busy core while a send is imminent).
 */
import { type Clock, monotonicNowNs } from './clock.js';
import { TimerHeap } from './min-heap.js';
import { type WakeClient, WakeThread } from './wake-thread.js';

/** Timer precision modes (`--timing-precision`). */
export type TimingPrecision = 'timer' | 'spin';

/** Options of {@link RealClock}. */
export interface RealClockOptions {
  precision?: TimingPrecision;
  /** How long before a target `spin` mode starts polling, ns. Default 1.5 ms. */
  spinNs?: number;
  /** `timer` mode: use the wake thread when available (default true; false = timers and polling only). */
  wakeThread?: boolean;
}

/** Node's timer granularity, ns: a shorter wait cannot be a timer. */
const TIMER_GRANULARITY_NS = 1_000_000;

/**
 * The longest delay one Node timer takes, ms (2^31 − 1, about 24.8 days; Node turns a longer one into
 * 1 ms with a warning). A longer wait is several timers in a row.
 */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/**
 * `timer` precision with the wake thread: it wakes the loop this long before a target, and the main
 * thread polls the rest, ns. Zero: the thread's own spin ({@link WAKE_LEAD_NS}) already absorbs its
 * futex slack, and the message reaches the main loop ~0.05 ms later (p50 arrival lateness 0.17 →
 * 0.22 ms in `npm run bench:side-by-side`), while polling 0.2 ms before every send cost 0.15 ms of
 * CPU per request at 1,000 requests/s (0.67 → 0.52 ms per request, the same benchmark).
 */
export const WAKE_POLL_NS = 0;

/** Single-timer, absolute-target clock on `performance.now()`. */
export class RealClock implements Clock, WakeClient {
  private readonly heap = new TimerHeap();
  private timer: NodeJS.Timeout | null = null;
  private armedForNs = Number.POSITIVE_INFINITY;
  private polling = false;
  private readonly spinNs: number;
  private readonly wake: WakeThread | null;
  /** Waiters by abort signal: one 'abort' listener per signal, not one per sleep. */
  private readonly bySignal = new Map<AbortSignal, Set<() => void>>();

  constructor(options: RealClockOptions = {}) {
    const spin = options.precision === 'spin';
    this.spinNs = spin ? (options.spinNs ?? 1_500_000) : 0;
    // Started here, before any schedule begins: creating the thread blocks for about a millisecond.
    this.wake = spin || options.wakeThread === false ? null : WakeThread.shared();
  }

  nowNs(): number {
    return monotonicNowNs();
  }

  /** An ordinary `setTimeout`: these timers need ms, not the send schedule's precision machinery. */
  callAt(targetNs: number, fire: () => void): () => void {
    let timer: NodeJS.Timeout;
    const set = (): void => {
      const delayMs = Math.max(0, (targetNs - this.nowNs()) / 1e6);
      timer = delayMs > MAX_TIMER_DELAY_MS ? setTimeout(set, MAX_TIMER_DELAY_MS) : setTimeout(fire, delayMs);
    };
    set();
    return () => clearTimeout(timer);
  }

  sleepUntil(targetNs: number, signal?: AbortSignal): Promise<void> {
    if (targetNs <= this.nowNs() || signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        entry.cancelled = true; // no-op once released; an aborted sleep leaves the heap
        if (signal !== undefined) this.forget(signal, finish);
        resolve();
      };
      const entry = this.heap.push(targetNs, finish);
      if (signal !== undefined) this.listen(signal, finish);
      this.arm();
    });
  }

  /** Called by the wake thread at the earliest target. */
  onWake(): void {
    this.releaseDue();
  }

  private listen(signal: AbortSignal, finish: () => void): void {
    let waiters = this.bySignal.get(signal);
    if (waiters === undefined) {
      const set = new Set<() => void>();
      waiters = set;
      this.bySignal.set(signal, set);
      signal.addEventListener('abort', () => this.abortAll(signal, set), { once: true });
    }
    waiters.add(finish);
  }

  private forget(signal: AbortSignal, finish: () => void): void {
    this.bySignal.get(signal)?.delete(finish);
  }

  private abortAll(signal: AbortSignal, waiters: Set<() => void>): void {
    this.bySignal.delete(signal);
    for (const finish of [...waiters]) finish();
    this.arm();
  }

  private arm(): void {
    const next = this.heap.peekLive();
    if (next === undefined) {
      this.wake?.cancel(this);
      this.disarmTimer();
      return;
    }
    if (this.polling) return;
    const remainingNs = next.targetNs - this.nowNs();
    const wake = this.wake?.usable === true ? this.wake : null;
    if (remainingNs <= this.pollWindowNs(wake)) {
      this.poll();
      return;
    }
    if (wake !== null) {
      wake.request(this, next.targetNs - WAKE_POLL_NS);
      // Liveness guard (the thread is unref'd) and fallback: fires at or after the target.
      this.armTimer(next.targetNs + TIMER_GRANULARITY_NS, Math.ceil(remainingNs / 1e6) + 1);
      return;
    }
    const wakeNs = next.targetNs - this.spinNs;
    this.armTimer(wakeNs, Math.floor((wakeNs - this.nowNs()) / 1e6));
  }

  /**
   * The final stretch polled on the main thread, ns: {@link WAKE_POLL_NS} after a wake-thread
   * wake-up; otherwise `spinNs` plus the timer granularity (a timer cannot wait less, and may fire
   * that much early).
   */
  private pollWindowNs(wake: WakeThread | null): number {
    return wake !== null ? WAKE_POLL_NS : this.spinNs + TIMER_GRANULARITY_NS;
  }

  /** One timer for `forNs` (kept when one is already set no later), `delayMs` from now. */
  private armTimer(forNs: number, delayMs: number): void {
    if (this.timer !== null && forNs >= this.armedForNs) return;
    this.disarmTimer();
    // A wait longer than one timer takes wakes early, finds nothing due and arms the next stretch.
    const clamped = Math.min(delayMs, MAX_TIMER_DELAY_MS);
    this.armedForNs = clamped < delayMs ? this.nowNs() + clamped * 1e6 : forNs;
    this.timer = setTimeout(() => this.onTimer(), clamped);
  }

  private disarmTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedForNs = Number.POSITIVE_INFINITY;
  }

  private onTimer(): void {
    this.timer = null;
    this.armedForNs = Number.POSITIVE_INFINITY;
    this.releaseDue();
  }

  private releaseDue(): void {
    const now = this.nowNs();
    for (let e = this.heap.peekLive(); e !== undefined && e.targetNs <= now; e = this.heap.peekLive()) {
      this.heap.pop();
      e.resolve();
    }
    this.arm();
  }

  private poll(): void {
    if (this.polling) return;
    this.polling = true;
    setImmediate(() => {
      this.polling = false;
      this.releaseDue();
    });
  }
}
