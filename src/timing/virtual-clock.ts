/**
 * A deterministic {@link Clock} for tests: time only moves when the test advances it, and
 * `runUntilIdle()` repeatedly lets pending promise work settle, then jumps to the next waiter.
 */
import type { Clock } from './clock.js';
import { TimerHeap } from './min-heap.js';

/** Virtual time in ns starting at `startNs`. */
export class VirtualClock implements Clock {
  private readonly heap = new TimerHeap();
  /** Callers inside {@link yieldNow}: time must not advance under them. */
  private yielding = 0;

  constructor(private now = 0) {}

  nowNs(): number {
    return this.now;
  }

  sleepUntil(targetNs: number, signal?: AbortSignal): Promise<void> {
    if (targetNs <= this.now || signal?.aborted === true) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const onAbort = (): void => resolve();
      this.heap.push(targetNs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** One `setImmediate` turn during which {@link runUntilIdle} does not advance time. */
  yieldNow(): Promise<void> {
    this.yielding++;
    return new Promise((resolve) =>
      setImmediate(() => {
        this.yielding--;
        resolve();
      }),
    );
  }

  /** Sets the time to `targetNs` (never backwards) and releases every waiter due by then. */
  async advanceTo(targetNs: number): Promise<void> {
    for (let e = this.heap.peek(); e !== undefined && e.targetNs <= targetNs; e = this.heap.peek()) {
      this.heap.pop();
      this.now = Math.max(this.now, e.targetNs);
      e.resolve();
      await settle();
    }
    this.now = Math.max(this.now, targetNs);
  }

  /** Advances waiter by waiter until nothing is waiting and `done` (if given) has settled. */
  async runUntilIdle(done?: Promise<unknown>): Promise<void> {
    let finished = false;
    void done?.then(
      () => {
        finished = true;
      },
      () => {
        finished = true;
      },
    );
    for (let guard = 0; guard < 10_000_000; guard++) {
      await settle();
      if (this.yielding > 0) continue;
      const next = this.heap.peek();
      if (next === undefined) {
        if (done === undefined || finished) return;
        continue;
      }
      await this.advanceTo(next.targetNs);
    }
    throw new Error('VirtualClock.runUntilIdle: did not become idle');
  }
}

/** Lets queued microtasks and one macrotask turn run. */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
