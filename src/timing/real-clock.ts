/**
 * The wall-time {@link Clock}: every waiter in one heap, served by ONE Node timer armed for the
 * earliest target. When it fires, everything due is released together (dispatch all that is due).
 * Node timers have 1 ms granularity and may fire up to ~1 ms early against `performance.now()`, so
 * the last stretch before a target is covered by `setImmediate` polling: in `timer` precision only
 * when the timer fired early; in `spin` precision for the final `spinNs` before every target (sub-
 * millisecond sends at the cost of one busy core while a send is imminent).
 */
import { type Clock, monotonicNowNs } from './clock.js';
import { TimerHeap } from './min-heap.js';

/** Timer precision modes (`--timing-precision`). */
export type TimingPrecision = 'timer' | 'spin';

/** Options of {@link RealClock}. */
export interface RealClockOptions {
  precision?: TimingPrecision;
  /** How long before a target `spin` mode starts polling, ns. Default 1.5 ms. */
  spinNs?: number;
}

/** Single-timer, absolute-target clock on `performance.now()`. */
export class RealClock implements Clock {
  private readonly heap = new TimerHeap();
  private timer: NodeJS.Timeout | null = null;
  private armedForNs = Number.POSITIVE_INFINITY;
  private polling = false;
  private readonly spinNs: number;

  constructor(options: RealClockOptions = {}) {
    this.spinNs = options.precision === 'spin' ? (options.spinNs ?? 1_500_000) : 0;
  }

  nowNs(): number {
    return monotonicNowNs();
  }

  sleepUntil(targetNs: number, signal?: AbortSignal): Promise<void> {
    if (targetNs <= this.nowNs() || signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let done = false;
      const finish = (): void => {
        if (done) return;
        done = true;
        signal?.removeEventListener('abort', finish);
        resolve();
      };
      signal?.addEventListener('abort', finish, { once: true });
      this.heap.push(targetNs, finish);
      this.arm();
    });
  }

  private arm(): void {
    const next = this.heap.peek();
    if (next === undefined || this.polling) return;
    const wakeNs = next.targetNs - this.spinNs;
    if (this.timer !== null && wakeNs >= this.armedForNs) return;
    if (this.timer !== null) clearTimeout(this.timer);
    const delayMs = Math.max(0, (wakeNs - this.nowNs()) / 1e6);
    this.armedForNs = wakeNs;
    this.timer = setTimeout(() => this.onTimer(), Math.floor(delayMs));
  }

  private onTimer(): void {
    this.timer = null;
    this.armedForNs = Number.POSITIVE_INFINITY;
    this.releaseDue();
  }

  private releaseDue(): void {
    const now = this.nowNs();
    for (let e = this.heap.peek(); e !== undefined && e.targetNs <= now; e = this.heap.peek()) {
      this.heap.pop();
      e.resolve();
    }
    const next = this.heap.peek();
    if (next === undefined) return;
    if (next.targetNs - now <= Math.max(this.spinNs, 1_000_000)) {
      this.poll();
    } else {
      this.arm();
    }
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
