/**
 * JSON text with `bigint` values written as plain JSON integers. Epoch nanoseconds exceed 2^53, so
 * going through `Number` would round them; Node 20 has no `JSON.rawJSON`, so bigints are swapped for
 * a marker string that no ordinary string can serialize to, then the markers are replaced by digits.
 * The reference the hand-built JSONL lines (`formatRecordLine`, src/export/jsonl-writer.ts) are
 * checked against.
 */

const MARKER = '\u0000bigint:';
// A marker string serializes as "\u0000bigint:<digits>"; user text containing a literal backslash-u
// serializes with a doubled backslash, so it can never match this pattern.
const MARKER_PATTERN = /"\\u0000bigint:(-?\d+)"/g;

function replacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? `${MARKER}${value.toString()}` : value;
}

/**
 * `JSON.stringify(value)` on one line, except that every `bigint` becomes a bare JSON integer with
 * all its digits. Non-finite numbers become `null` (standard JSON.stringify behaviour).
 */
export function stringifyWithBigInt(value: unknown): string {
  return JSON.stringify(value, replacer).replace(MARKER_PATTERN, '$1');
}
