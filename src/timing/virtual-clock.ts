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
      const onAbort = (): void => {
        entry.cancelled = true; // an aborted sleep leaves the heap, so time does not jump to it
        resolve();
      };
      const entry = this.heap.push(targetNs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Fires in virtual time: at `targetNs`, or on the next advance when it is already past. */
  callAt(targetNs: number, fire: () => void): () => void {
    const entry = this.heap.push(Math.max(targetNs, this.now), fire);
    return () => {
      entry.cancelled = true;
    };
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
    for (let e = this.heap.peekLive(); e !== undefined && e.targetNs <= targetNs; e = this.heap.peekLive()) {
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
      const next = this.heap.peekLive();
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
