/**
 * Time sources. Every timestamp in tokenload is a monotonic nanosecond count taken from
 * `performance.now()` (sub-microsecond resolution, never steps back), kept as a JS number: it counts
 * from process start, so doubles hold it exactly to well below a nanosecond for months of uptime.
 * Schedulers receive a {@link Clock} so tests can run them in virtual time.
 */

/** A monotonic clock plus a way to wait for an absolute time on it. */
export interface Clock {
  /** Current monotonic time in ns. */
  nowNs(): number;
  /**
   * Resolves at or after `targetNs` (absolute, never a relative sleep), or early if `signal` aborts.
   * Resolves immediately when the target is already past.
   */
  sleepUntil(targetNs: number, signal?: AbortSignal): Promise<void>;
  /**
   * A coarse one-shot timer (a cancellation delay, a cut-off, a grace period): calls `fire` once the
   * clock reaches `targetNs`, never synchronously and never before a send queued now has left (a
   * past target fires on a later turn, as `setTimeout(0)`). Returns a disarm function.
   */
  callAt(targetNs: number, fire: () => void): () => void;
  /**
   * Lets pending I/O callbacks run without time passing for the caller's schedule (a virtual clock
   * must not advance during it). Default when absent: one `setImmediate` turn.
   */
  yieldNow?(): Promise<void>;
}

/** Yields one event-loop turn through `clock.yieldNow`, or `setImmediate` when the clock has none. */
export function yieldEventLoop(clock: Clock): Promise<void> {
  if (clock.yieldNow !== undefined) return clock.yieldNow();
  return new Promise((resolve) => setImmediate(resolve));
}

/** Current monotonic time in ns (`performance.now()` × 1e6). */
export function monotonicNowNs(): number {
  return performance.now() * 1e6;
}

/**
 * Maps this process's monotonic ns to wall-clock epoch ns, anchored once at construction.
 * Epoch values exceed 2^53, so they are `bigint`.
 */
export class TimeBase {
  private readonly epochNsAtOrigin: bigint;

  constructor() {
    // performance.timeOrigin is the epoch ms (µs precision) at which performance.now() was 0.
    this.epochNsAtOrigin = BigInt(Math.round(performance.timeOrigin * 1e3)) * 1000n;
  }

  /** Epoch ns for a monotonic ns value of this process. */
  toEpochNs(monoNs: number): bigint {
    return this.epochNsAtOrigin + BigInt(Math.round(monoNs));
  }
}
