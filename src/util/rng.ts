/**
 * Deterministic pseudo-random numbers for prompt synthesis. A block's content must be a pure
 * function of (seed, hash id) — not of the order in which ids are first seen — so that the same id
 * gives byte-identical text anywhere in a run and across runs with the same `--random-seed`.
 */

import { createHash } from 'node:crypto';
import { fmix32 } from './fmix32.js';

/** A stream of uint32 values. */
export type Uint32Source = () => number;

/**
 * Seeds a generator from a string key via SHA-256 (first 16 bytes), then runs xoshiro128**
 * (Blackman & Vigna, "Scrambled linear pseudorandom number generators", 2021).
 */
export function rngFromKey(key: string): Uint32Source {
  const digest = createHash('sha256').update(key).digest();
  return xoshiro128ss(
    digest.readUInt32BE(0),
    digest.readUInt32BE(4),
    digest.readUInt32BE(8),
    digest.readUInt32BE(12),
  );
}

/**
 * Seeds the same generator from two integers, for the hot path (one KV-cache block per call, with
 * no hashing object and no string key): `seed` and `id` (a trace hash id: a non-negative integer up
 * to 2^64 − 1, a bigint above 2^53 − 1) are mixed with MurmurHash3's 32-bit finalizer (Appleby,
 * public domain) over the id's low and high 32-bit halves, so every bit of a 64-bit id counts.
 * Different (seed, id) pairs give independent-looking streams; equal pairs give equal streams.
 */
export function rngFromIds(seed: number, id: number | bigint): Uint32Source {
  const big = typeof id === 'bigint';
  const lo = big ? Number(id & 0xffffffffn) : id >>> 0;
  const hi = big ? Number((id >> 32n) & 0xffffffffn) : Math.floor(id / 4294967296) >>> 0;
  const a = fmix32((seed ^ 0x9e3779b9 ^ lo) >>> 0);
  const b = fmix32((a ^ hi ^ 0x85ebca6b) >>> 0);
  const c = fmix32((b ^ lo ^ 0xc2b2ae35) >>> 0);
  const d = fmix32((c ^ seed ^ 0x27d4eb2f) >>> 0);
  return xoshiro128ss(a, b, c, d);
}

/** xoshiro128** over a 128-bit state (an all-zero state is replaced by a = 1). */
function xoshiro128ss(a0: number, b0: number, c0: number, d0: number): Uint32Source {
  let a = a0;
  let b = b0;
  let c = c0;
  let d = d0;
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
