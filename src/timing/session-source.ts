/**
 * Where closed-loop and rate strategies get their next session, and when they must stop issuing.
 */
import type { Conversation } from '../dataset/types.js';

/** Yields sessions in the dataset sampling order; undefined when the dataset is exhausted. */
export interface SessionSource {
  next(): Conversation | undefined;
}

/**
 * A source cycling through `order` (indices into `conversations`, e.g. from the sampling
 * strategy) for `passes` passes (Infinity = forever).
 */
export function cyclingSource(
  conversations: readonly Conversation[],
  order: (pass: number) => readonly number[],
  passes = Number.POSITIVE_INFINITY,
): SessionSource {
  let pass = 0;
  let current = order(0);
  let i = 0;
  return {
    next() {
      if (conversations.length === 0) return undefined;
      if (i >= current.length) {
        pass++;
        if (pass >= passes) return undefined;
        current = order(pass);
        i = 0;
      }
      return conversations[current[i++] as number];
    },
  };
}

/** Stop conditions of the profiling phase: a request count and/or a duration. */
export interface StopConditions {
  /** Stop issuing after this many requests (turns). */
  requestCount?: number;
  /** Stop issuing this many ns after the phase started. */
  durationNs?: number;
}

/** Counts issued requests against {@link StopConditions}. */
export class IssueBudget {
  issued = 0;
  /** Aborted once the request count is reached: a wait for a later turn ends there. */
  readonly countReached = new AbortController();

  constructor(
    private readonly stop: StopConditions,
    private readonly startNs: number,
  ) {}

  /** True (and counts one request) if another request may be issued at `nowNs`. */
  tryIssue(nowNs: number): boolean {
    if (this.exhausted(nowNs)) return false;
    this.issued++;
    if (this.stop.requestCount !== undefined && this.issued >= this.stop.requestCount)
      this.countReached.abort();
    return true;
  }

  /** True once the count is reached or the duration has passed. */
  exhausted(nowNs: number): boolean {
    if (this.stop.requestCount !== undefined && this.issued >= this.stop.requestCount) return true;
    return this.stop.durationNs !== undefined && nowNs - this.startNs >= this.stop.durationNs;
  }

  private combined: { run: AbortSignal; signal: AbortSignal } | null = null;

  /**
   * `run` or the count being reached, whichever comes first: what a wait between turns ends on. One
   * signal per budget and run signal (made once, not per wait).
   */
  waitSignal(run: AbortSignal): AbortSignal {
    if (this.combined?.run !== run)
      this.combined = { run, signal: AbortSignal.any([run, this.countReached.signal]) };
    return this.combined.signal;
  }

  /** Monotonic ns at which the duration ends, or Infinity. */
  endNs(): number {
    return this.stop.durationNs === undefined
      ? Number.POSITIVE_INFINITY
      : this.startNs + this.stop.durationNs;
  }
}

/**
 * A source drawing conversation indices from `nextIndex` (a dataset sampler), at most
 * `maxSessions` times (Infinity = forever).
 */
export function samplerSource(
  conversations: readonly Conversation[],
  nextIndex: () => number,
  maxSessions = Number.POSITIVE_INFINITY,
): SessionSource {
  let taken = 0;
  return {
    next() {
      if (taken >= maxSessions || conversations.length === 0) return undefined;
      taken++;
      return conversations[nextIndex()];
    },
  };
}
