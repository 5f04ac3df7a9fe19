/**
 * One request at a time built ahead of its send time, in steps (`Dispatch.prepareInSteps`: a long
 * synthesized prompt's new text a few thousand tokens per step), between sends: a step runs only
 * when it is expected to end before the next send is due, and the event loop runs between steps.
 * So a 120k-token prompt of new KV blocks (~25 ms of work in one piece) never holds up a send that
 * falls due while it is being built; a send that needs the request being built finishes it at once.
 */
import { runSteps } from '../util/steps.js';
import { type Clock, yieldEventLoop } from './clock.js';
import type { Dispatch, DispatchItem, PreparedSend } from './types.js';

/** A finished build and what it was for. */
export interface BuiltAhead<K> {
  key: K;
  prepared: PreparedSend;
}

/** Builds requests ahead, one in progress at a time; `K` names what a build is for (a session). */
export class BuildAhead<K> {
  /** Smoothed duration of one step, ns (starts at 1 ms). */
  private stepNs = 1e6;
  private current: { key: K; steps: Iterator<void, PreparedSend, void> } | null = null;

  constructor(
    private readonly dispatch: Dispatch,
    private readonly clock: Clock,
  ) {}

  /** True while a build is in progress. */
  get busy(): boolean {
    return this.current !== null;
  }

  /** Starts building `item` for `key`; a build must not be in progress. */
  begin(key: K, item: DispatchItem): void {
    const steps = this.dispatch.prepareInSteps?.(item) ?? oneStep(() => this.dispatch.prepare(item));
    this.current = { key, steps };
  }

  /**
   * Runs steps of the build in progress, yielding to the event loop after each, while two smoothed
   * steps still fit before `untilNs`. Returns the finished build, or null when it stopped first (or
   * none was in progress).
   */
  async advance(untilNs: number): Promise<BuiltAhead<K> | null> {
    for (;;) {
      const current = this.current;
      if (current === null) return null;
      const t0 = this.clock.nowNs();
      if (t0 + 2 * this.stepNs > untilNs) return null;
      const step = current.steps.next();
      const t1 = this.clock.nowNs();
      this.stepNs = 0.8 * this.stepNs + 0.2 * (t1 - t0);
      if (step.done === true) this.current = null;
      await yieldEventLoop(this.clock);
      if (step.done === true) return { key: current.key, prepared: step.value };
    }
  }

  /** Finishes the build for `key` at once when it is the one in progress; its request, or null. */
  finish(key: K): PreparedSend | null {
    const current = this.current;
    if (current === null || current.key !== key) return null;
    this.current = null;
    return runSteps(current.steps);
  }
}

/** A build in one step, for a dispatcher without `prepareInSteps`. */
function oneStep(build: () => PreparedSend): Iterator<void, PreparedSend, void> {
  return { next: () => ({ done: true, value: build() }) };
}
