/**
 * Seeded random numbers for dataset generation and sampling. Each purpose draws from its own stream,
 * keyed by a string such as `"<seed>:isl"`, so changing one option (say, the turn count) never shifts
 * the numbers another option sees. Streams come from `rngFromKey` (SHA-256 seeded xoshiro128**).
 */
import { rngFromKey, type Uint32Source } from '../util/rng.js';

const TWO_POW_32 = 4_294_967_296;

/** A seeded stream of numbers. */
export interface SeededRandom {
  /** Uniform in [0, 1), 32 bits of resolution. */
  float(): number;
  /** Uniform integer in [0, n) for 1 ≤ n ≤ 2^32, without modulo bias. */
  intBelow(n: number): number;
  /** Standard normal sample (mean 0, stddev 1), Box–Muller. */
  normal(): number;
}

class Stream implements SeededRandom {
  constructor(private readonly next: Uint32Source) {}

  float(): number {
    return this.next() / TWO_POW_32;
  }

  intBelow(n: number): number {
    const limit = TWO_POW_32 - (TWO_POW_32 % n);
    for (;;) {
      const x = this.next();
      if (x < limit) return x % n;
    }
  }

  normal(): number {
    const u1 = (this.next() + 0.5) / TWO_POW_32;
    const u2 = this.next() / TWO_POW_32;
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}

/**
 * A stream for `purpose` under run seed `seed`; the same pair always gives the same numbers, and any
 * integer seed, 0 included, is valid.
 */
export function seededRandom(seed: number, purpose: string): SeededRandom {
  return new Stream(rngFromKey(`${seed}:${purpose}`));
}

/** Python's `round`: halves go to the even neighbour (2.5 → 2, 3.5 → 4). */
export function roundHalfEven(x: number): number {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/**
 * A positive integer from a normal distribution (AIPerf `sample_positive_normal_integer`):
 * `max(1, round(mean))` when `stddev` is 0, else `max(1, ceil(mean + stddev · z))`.
 */
export function samplePositiveInt(mean: number, stddev: number, random: SeededRandom): number {
  if (stddev === 0) return Math.max(1, roundHalfEven(mean));
  return Math.max(1, Math.ceil(mean + stddev * random.normal()));
}
