/**
 * One request as the schedulers see it: prompt token ids in, a callback per generated token out.
 */
import type { KvAllocation } from './kv-pool.js';

/** Receives a sequence's output as it is produced. */
export interface SequenceSink {
  /**
   * Called once per generated token, in order.
   * @param index 0-based output token index.
   * @param nowNs monotonic ns of the emission (the step's end in engine mode).
   * @param batchSize sequences in the step that produced the token (1 in fixed mode).
   */
  onToken(index: number, nowNs: number, batchSize: number): void;
  /** Called once after the last token; the sequence's KV blocks are already released. */
  onDone(nowNs: number): void;
  /**
   * Optional: the `onToken` (and possibly `onDone`) calls up to {@link SequenceSink.endBurst} are
   * due at the same instant and come synchronously, so the sink may write them all at once.
   */
  beginBurst?(): void;
  /** Optional: ends a burst begun by {@link SequenceSink.beginBurst}; the sink writes what it gathered. */
  endBurst?(): void;
}

/** Scheduler-side state of one request. */
export interface Sequence {
  readonly id: number;
  /** Prompt length in tokens. */
  readonly promptTokens: number;
  /** Chained keys of the prompt's full KV blocks. */
  readonly blockKeys: readonly number[];
  /** Tokens to generate (reasoning + content). */
  readonly outputTokens: number;
  readonly sink: SequenceSink;
  /** Prompt tokens served from the prefix cache (set on admission). */
  cachedTokens: number;
  /** Prompt tokens still to prefill. */
  prefillRemaining: number;
  /** Tokens generated so far. */
  generated: number;
  /** KV blocks held while running. */
  alloc: KvAllocation | null;
  /** True once cancelled or finished; schedulers drop it. */
  finished: boolean;
  /** Monotonic ns at which the scheduler got it (`submit`); null before. */
  queuedNs: number | null;
  /** Monotonic ns at which it was admitted (left the queue, its prefill could start); null before. */
  admittedNs: number | null;
}

/** What the HTTP layer submits to a scheduler. */
export interface Scheduler {
  /** Queues a sequence. */
  submit(seq: Sequence): void;
  /** Stops a sequence early (client gone or fault) and frees its blocks. Idempotent. */
  cancel(seq: Sequence): void;
  /** Sequences admitted and not finished. */
  running(): number;
  /** Sequences queued for admission. */
  waiting(): number;
  /** Stops timers; pending sequences are dropped without callbacks. */
  close(): void;
}

/** Creates a sequence in its initial (waiting) state. */
export function newSequence(
  id: number,
  promptTokens: number,
  blockKeys: readonly number[],
  outputTokens: number,
  sink: SequenceSink,
): Sequence {
  return {
    id,
    promptTokens,
    blockKeys,
    outputTokens,
    sink,
    cachedTokens: 0,
    prefillRemaining: promptTokens,
    generated: 0,
    alloc: null,
    finished: false,
    queuedNs: null,
    admittedNs: null,
  };
}
