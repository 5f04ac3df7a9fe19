/**
 * Stepwise computations: a generator that yields between bounded pieces of work, so a caller can
 * spread a long computation over event-loop turns (and stop between steps when something is due),
 * or run it at once with {@link runSteps}.
 */

/** A computation in steps: each `next()` runs one step; the last one returns the result. */
export type Steps<T> = Generator<void, T, void>;

/** Runs `steps` to its end at once and returns its result (rethrows what a step throws). */
export function runSteps<T>(steps: Iterator<void, T, void>): T {
  for (;;) {
    const step = steps.next();
    if (step.done === true) return step.value;
  }
}
