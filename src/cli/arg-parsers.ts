/**
 * Commander argument parsers of the options that are not schema-derived (`analyze-trace` and
 * `synthesize-trace` besides their `--synthesis-*` options, `report`, `calibrate`). Each throws commander's `InvalidArgumentError`, so a
 * bad value fails before any work, with a message naming the expectation.
 */
import { InvalidArgumentError } from 'commander';
import { plainNumber } from '../util/plain-number.js';

/** Parses a finite number ≥ `min` (and ≤ `max`), in plain decimal (util/plain-number.ts). */
export function numberIn(min: number, max = Number.POSITIVE_INFINITY): (value: string) => number {
  return (value) => {
    const n = plainNumber(value, false);
    if (n === undefined || !Number.isFinite(n) || n < min || n > max) {
      throw new InvalidArgumentError(
        `expected a number${max === Number.POSITIVE_INFINITY ? ` >= ${min}` : ` in [${min}, ${max}]`}, got "${value}".`,
      );
    }
    return n;
  };
}

/** Parses an integer ≥ `min`, in plain decimal digits (no spaces, `0x`, exponent). */
export function integerAtLeast(min: number): (value: string) => number {
  return (value) => {
    const n = plainNumber(value, true);
    if (n === undefined || !Number.isSafeInteger(n) || n < min) {
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
