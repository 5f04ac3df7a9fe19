/** A counting semaphore with FIFO waiters (session slots for `--concurrency`). */
export class Semaphore {
  private readonly waiters: Array<() => void> = [];

  constructor(private available: number) {}

  /** Resolves when a slot is taken. */
  acquire(): Promise<void> {
    if (this.available > 0) {
      this.available--;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Takes a slot if one is free, without waiting. */
  tryAcquire(): boolean {
    if (this.available <= 0) return false;
    this.available--;
    return true;
  }

  /** Returns a slot, waking the oldest waiter. */
  release(): void {
    const next = this.waiters.shift();
    if (next !== undefined) next();
    else this.available++;
  }
}
