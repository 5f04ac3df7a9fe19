/**
 * Exact reading of epoch-nanosecond integers from a JSONL line. They exceed 2^53, so `JSON.parse`
 * would round them; the digits are taken from the raw text instead and kept as `bigint`.
 */

const patterns = new Map<string, RegExp>();

function patternOf(field: string): RegExp {
  let re = patterns.get(field);
  if (re === undefined) {
    re = new RegExp(`"${field}"\\s*:\\s*(-?\\d+|null)`);
    patterns.set(field, re);
  }
  return re;
}

/**
 * The integer value of `"field": <digits>` in `line`, exactly; null when the field is absent, null,
 * or not an integer literal. The first occurrence wins (metadata comes before metrics in a line).
 */
export function readEpochNs(line: string, field: string): bigint | null {
  const m = patternOf(field).exec(line);
  const digits = m?.[1];
  return digits === undefined || digits === 'null' ? null : BigInt(digits);
}

/** `(ns − t0Ns)` in seconds, as a float (exact to well below a microsecond for runs shorter than a year). */
export function relativeSeconds(ns: bigint, t0Ns: bigint): number {
  return Number(ns - t0Ns) / 1e9;
}
