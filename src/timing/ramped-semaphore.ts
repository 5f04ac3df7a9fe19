/**
 * A counting semaphore with FIFO waiters whose number of slots can rise from 1 to its limit over a
 * ramp, one slot at a time at evenly spaced times (AIPerf's docs/tutorials/ramping.md: "starts at 1
 * and increases by +1 at even intervals", the last slot opening exactly when the ramp ends). The
 * session cap of a request rate (`--concurrency` with `--concurrency-ramp-duration`) and the prefill
 * gate (`--prefill-concurrency`, `--prefill-concurrency-ramp-duration`) are ones.
 */
import type { Clock } from './clock.js';

/** A ramp of a {@link RampedSemaphore}'s slots. */
export interface SlotRamp {
  clock: Clock;
  /** Time over which the slots open, ns (> 0). */
  rampNs: number;
}

/** Semaphore whose slots may open over a ramp that starts at its first {@link RampedSemaphore.start}. */
export class RampedSemaphore {
  private readonly waiters: Array<() => void> = [];
  private available: number;
  private readonly timers: Array<() => void> = [];
  private started = false;

  /**
   * @param limit slots once every one is open (>= 1).
   * @param ramp absent: every slot is open at once.
   */
  constructor(
    readonly limit: number,
    private readonly ramp?: SlotRamp,
  ) {
    this.available = ramp === undefined ? limit : Math.min(1, limit);
  }

  /**
   * Starts the ramp now (slot i+1 opens at now + i·ramp/(limit−1)); later calls, and calls without
   * a ramp, do nothing. {@link acquire} and {@link tryAcquire} call it.
   */
  start(): void {
    if (this.started) return;
    this.started = true;
    const { ramp, limit } = this;
    if (ramp === undefined || limit <= 1) return;
    const startNs = ramp.clock.nowNs();
    for (let i = 1; i < limit; i++)
      this.timers.push(ramp.clock.callAt(startNs + (i * ramp.rampNs) / (limit - 1), () => this.release()));
  }

  /** Resolves when a slot is taken (FIFO among waiters). */
  acquire(): Promise<void> {
    this.start();
    if (this.available > 0) {
      this.available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /**
   * Calls `onSlot` when a slot is handed over: at once (synchronously) when one is free, else when a
   * release or the ramp frees one for it (FIFO), from inside that release, before any continuation
   * of it runs: the moment its wait ended.
   */
  take(onSlot: () => void): void {
    this.start();
    if (this.available > 0) {
      this.available--;
      onSlot();
    } else this.waiters.push(onSlot);
  }

  /** Takes a slot if one is free, without waiting. */
  tryAcquire(): boolean {
    this.start();
    if (this.available <= 0) return false;
    this.available--;
    return true;
  }

  /** Returns a slot (or opens one of the ramp), waking the oldest waiter. */
  release(): void {
    const next = this.waiters.shift();
    if (next !== undefined) next();
    else this.available++;
  }

  /** Stops the ramp's timers not yet fired (the slots they would open stay closed). */
  close(): void {
    for (const disarm of this.timers.splice(0)) disarm();
  }
}
