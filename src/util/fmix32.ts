/**
 * MurmurHash3's 32-bit finalizer (Austin Appleby, public domain, MurmurHash3.cpp `fmix32`): a
 * bijective avalanche of a uint32, shared by the prompt text generator's seeding and the ideal prefix
 * cache's chain keys.
 * @param x any number; its low 32 bits are mixed.
 * @returns a uint32.
 */
export function fmix32(x: number): number {
  let h = x;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
