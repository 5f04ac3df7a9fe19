/**
 * Commander argument parsers of the options that are not schema-derived (`analyze-trace` and
 * `synthesize-trace` besides their `--synthesis-*` options, `report`, `calibrate`). Each throws commander's `InvalidArgumentError`, so a
 * bad value fails before any work, with a message naming the expectation.
 */
import { InvalidArgumentError } from 'commander';
import { plainNumber, plainNumberProblem } from '../util/plain-number.js';

/** Parses a finite number ≥ `min` (and ≤ `max`), a decimal number (util/plain-number.ts). */
export function numberIn(min: number, max = Number.POSITIVE_INFINITY): (value: string) => number {
  return (value) => {
    const n = plainNumber(value, false);
    if (n === undefined) throw new InvalidArgumentError(`${plainNumberProblem(value, false)}.`);
    if (!Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `expected a number${max === Number.POSITIVE_INFINITY ? ` >= ${min}` : ` in [${min}, ${max}]`}, got "${value}".`,
      );
    }
    return n;
  };
}

/** Parses an integer ≥ `min`, digits only (no spaces, `0x`, exponent: util/plain-number.ts). */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = plainNumber(value, true);
    if (n === undefined) throw new InvalidArgumentError(`${plainNumberProblem(value, true)}.`);
    if (!Number.isSafeInteger(n) || n < min) {
      throw new InvalidArgumentError(`expected an integer >= ${min}, got "${value}".`);
    }
    return n;
  };
}

/** A choice among `allowed`. */
export function oneOf<T extends string>(allowed: readonly T[]): (value: string) => T {
  return (value) => {
    if (!(allowed as readonly string[]).includes(value)) {
      throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}, got "${value}".`);
    }
    return value as T;
  };
}
