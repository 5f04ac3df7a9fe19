/**
 * A one-shot timer on an absolute monotonic target that never fires before it. Node timers count
 * whole milliseconds from the event loop's cached time, so a plain `setTimeout` can fire up to ~1 ms
 * early; an early simulator token would make a configured TTFT or ITL shorter than asked. This
 * re-arms until the target has passed (so it can be up to ~1 ms late, never early).
 */
import { monotonicNowNs } from '../timing/clock.js';

/** Fires `fn` once, at or after `targetNs` (monotonic ns); `cancel()` stops it. */
export class DueTimer {
  private handle: NodeJS.Timeout;

  constructor(
    private readonly targetNs: number,
    private readonly fn: () => void,
  ) {
    this.handle = this.arm();
  }

  /** Stops the timer; safe to call after it fired. */
  cancel(): void {
    clearTimeout(this.handle);
  }

  private arm(): NodeJS.Timeout {
    const delayMs = Math.max(1, Math.ceil((this.targetNs - monotonicNowNs()) / 1e6));
    return setTimeout(() => {
      if (monotonicNowNs() < this.targetNs) this.handle = this.arm();
      else this.fn();
    }, delayMs);
  }
}
