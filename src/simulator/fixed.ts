/**
 * Fixed-mode scheduler: no batching. Token i of a request is emitted at
 * `admission + ttftMs + ttftPerUncachedTokenMs·uncachedPromptTokens + i·itlMs`, on absolute
 * timestamps; a first token due at admission (TTFT 0) is emitted at once, without a timer. The prefix
 * cache is still consulted so `cached_tokens` is reported; when the pool cannot hold a request its
 * prompt is simply treated as uncached.
 *
 * Admission is at arrival, unless `fixedMaxRunning` (> 0) caps the requests served at once: then a
 * request arriving with every slot taken waits in FIFO order and is admitted when one frees, so its
 * TTFT holds the wait. The server's capacity is then exactly
 * `fixedMaxRunning / (ttftMs + (outputTokens − 1)·itlMs)` requests per second (uncached cost aside): a
 * known truth for tests of overload (queue growth, its onset rate).
 */
import { monotonicNowNs } from '../timing/clock.js';
import { DueTimer } from './due-timer.js';
import type { KvPool } from './kv-pool.js';
import type { Scheduler, Sequence } from './sequence.js';

/** Fixed-mode latencies (ms). */
export interface FixedParams {
  ttftMs: number;
  itlMs: number;
  ttftPerUncachedTokenMs: number;
  /** Most requests served at once; 0 or absent: no limit. */
  fixedMaxRunning?: number;
}

/** Per-request timers on absolute targets (one per token, or one per request when `itlMs` is 0). */
export class FixedScheduler implements Scheduler {
  private readonly timers = new Map<Sequence, DueTimer>();
  /** Admitted and not finished (the slots taken). */
  private readonly admitted = new Set<Sequence>();
  /** Arrived while every slot was taken, in arrival order. */
  private readonly queue: Sequence[] = [];
  private closed = false;

  constructor(
    private readonly params: FixedParams,
    private readonly pool: KvPool,
  ) {}

  submit(seq: Sequence): void {
    if (this.closed) return;
    seq.queuedNs = monotonicNowNs();
    const slots = this.params.fixedMaxRunning ?? 0;
    if (slots > 0 && this.admitted.size >= slots) this.queue.push(seq);
    else this.admit(seq);
  }

  /** Starts serving `seq` now: its tokens are timed from this moment. */
  private admit(seq: Sequence): void {
    this.admitted.add(seq);
    const arrivalNs = monotonicNowNs();
    seq.admittedNs = arrivalNs;
    const total = this.pool.blocksFor(seq.promptTokens + seq.outputTokens);
    seq.alloc = this.pool.allocate(seq.blockKeys, seq.promptTokens, total);
    seq.cachedTokens = seq.alloc === null ? 0 : seq.alloc.hitKeys.length * this.pool.blockSize;
    const uncached = seq.promptTokens - seq.cachedTokens;
    const firstNs = arrivalNs + (this.params.ttftMs + this.params.ttftPerUncachedTokenMs * uncached) * 1e6;
    if (firstNs <= arrivalNs) this.fire(seq, firstNs);
    else this.schedule(seq, firstNs);
  }

  /** Fires the token due at `targetNs` then (never earlier: {@link DueTimer}). */
  private schedule(seq: Sequence, targetNs: number): void {
    this.timers.set(seq, new DueTimer(targetNs, () => this.fire(seq, targetNs)));
  }

  /**
   * Emits the token due at `targetNs`. With `itlMs` 0 every later token is due at the same instant,
   * so they are all emitted now, as one burst the sink may write at once; otherwise the next token
   * gets its own timer.
   */
  private fire(seq: Sequence, targetNs: number): void {
    this.timers.delete(seq);
    if (seq.finished) return;
    const itlNs = this.params.itlMs * 1e6;
    if (itlNs > 0) {
      if (this.emit(seq, targetNs)) this.schedule(seq, targetNs + itlNs);
      return;
    }
    seq.sink.beginBurst?.();
    while (this.emit(seq, targetNs));
    seq.sink.endBurst?.();
  }

  /** Emits one token (and the end after the last one); true when more tokens follow. */
  private emit(seq: Sequence, targetNs: number): boolean {
    if (seq.generated === 0) {
      seq.prefillRemaining = 0;
      if (seq.alloc !== null) this.pool.commitPrompt(seq.alloc, seq.blockKeys);
    }
    const index = seq.generated++;
    seq.sink.onToken(index, targetNs, 1);
    if (seq.finished) return false;
    if (seq.generated >= seq.outputTokens) {
      this.cancel(seq);
      seq.sink.onDone(targetNs);
      return false;
    }
    return true;
  }

  cancel(seq: Sequence): void {
    if (seq.finished) return;
    seq.finished = true;
    this.timers.get(seq)?.cancel();
    this.timers.delete(seq);
    if (seq.alloc !== null) this.pool.release(seq.alloc);
    seq.alloc = null;
    if (this.admitted.delete(seq)) this.admitNext();
    else {
      // Cancelled while waiting (the client went away): it never took a slot.
      const at = this.queue.indexOf(seq);
      if (at >= 0) this.queue.splice(at, 1);
    }
  }

  /** A slot freed: the longest-waiting request takes it. */
  private admitNext(): void {
    const next = this.queue.shift();
    if (next !== undefined && !this.closed) this.admit(next);
  }

  running(): number {
    return this.admitted.size;
  }

  waiting(): number {
    return this.queue.length;
  }

  close(): void {
    this.closed = true;
    this.queue.length = 0;
    for (const t of this.timers.values()) t.cancel();
    this.timers.clear();
  }
}
