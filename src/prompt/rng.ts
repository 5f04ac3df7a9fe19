/**
 * Deterministic pseudo-random numbers for prompt synthesis. A block's content must be a pure
 * function of (seed, hash id) — not of the order in which ids are first seen — so that the same id
 * gives byte-identical text anywhere in a run and across runs with the same `--random-seed`.
 */
import { createHash } from 'node:crypto';

/** A stream of uint32 values. */
export type Uint32Source = () => number;

/**
 * Seeds a generator from a string key via SHA-256 (first 16 bytes), then runs xoshiro128**
 * (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021).
 */
export function rngFromKey(key: string): Uint32Source {
  const digest = createHash('sha256').update(key).digest();
  let a = digest.readUInt32BE(0);
  let b = digest.readUInt32BE(4);
  let c = digest.readUInt32BE(8);
  let d = digest.readUInt32BE(12);
  if ((a | b | c | d) === 0) a = 1;
  return () => {
    const result = Math.imul(rotl(Math.imul(b, 5), 7), 9) >>> 0;
    const t = b << 9;
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = rotl(d, 11);
    return result;
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
