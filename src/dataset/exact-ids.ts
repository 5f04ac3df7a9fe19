/**
 * Identifiers read exactly. Trace ids are integers that may use all 64 bits: Bailian `hash_ids` are
 * salted 64-bit block hashes (SipHash), and `chat_id`, `parent_chat_id` and `session_id` are opaque
 * integers too. `JSON.parse` reads every number as a double, so two ids that differ only beyond
 * 2^53 (9007199254740992 and 9007199254740993) would become one, and different blocks one block.
 *
 * The reader therefore parses a row with `JSON.parse` (fast, native) and, only when an id field holds
 * a number that is not a safe integer, reads that field's integer literals again from the row's text,
 * keeping every digit ({@link readIdsExactly}). Node 20 has neither `JSON.rawJSON` nor the source text
 * in `JSON.parse` revivers (V8 ships it from Node 21), and a general lossless JSON parser would replace
 * the native parse of every row with one written in JavaScript to change a few fields; this scan
 * touches only the named top-level fields of a row already known to be valid JSON. Costs (CPU, Node 20,
 * `bench/trace-ids.ts`): rows with small ids +0.2 µs each (one check per id); a row of 64-bit ids about
 * 3× its `JSON.parse` time.
 *
 * Representation ({@link TraceId}): a `number` up to `Number.MAX_SAFE_INTEGER` (2^53 − 1), a `bigint`
 * above. The form is canonical, so equal ids are equal `Map` keys and equal template strings.
 */
import type { TraceId } from './types.js';

/** Top-level fields of JSONL traces whose integers are identifiers and read exactly. */
export const TRACE_ID_FIELDS: readonly string[] = ['hash_ids', 'chat_id', 'parent_chat_id', 'session_id'];

/** Largest value a 64-bit block hash can take, 2^64 − 1. */
export const MAX_HASH_ID = 2n ** 64n - 1n;

/**
 * True when an id field of a parsed row holds a number `JSON.parse` may have rounded: a number that
 * is not a safe integer (beyond 2^53, or a fraction, which the exact read then keeps as it is), or an
 * array element that is not a safe integer. Fast path: one check per id.
 */
export function hasInexactId(row: Record<string, unknown>): boolean {
  for (let f = 0; f < TRACE_ID_FIELDS.length; f += 1) {
    const value = row[TRACE_ID_FIELDS[f] as string];
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) return true;
    } else if (Array.isArray(value)) {
      for (let i = 0; i < value.length; i += 1) if (!Number.isSafeInteger(value[i])) return true;
    }
  }
  return false;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
/** A JSON integer literal, possibly with white space around it (which `BigInt` and `Number` ignore). */
const INTEGER_LITERAL = /^\s*-?\d+\s*$/;

/**
 * A number in an id field that is not an integer literal and that a double holds only rounded
 * (`9.007199254740993e15` reads as 9007199254740992): never a valid id. It keeps the file's own
 * text, so the validation error shows what the file says ({@link exactJson} writes `text`).
 */
export class RoundedNumber {
  /**
   * @param text the literal as written in the file.
   * @param value what a double makes of it.
   */
  constructor(
    readonly text: string,
    readonly value: number,
  ) {}
}

/**
 * The value of a JSON number literal: an integer beyond 2^53 − 1 as a bigint, a literal a double
 * rounds to an integer beyond 2^53 (an exponent or fraction form) as a {@link RoundedNumber},
 * anything else (a smaller integer, a fraction) as a number.
 */
function exactNumber(literal: string): TraceId | RoundedNumber {
  if (!INTEGER_LITERAL.test(literal)) {
    const value = Number(literal);
    return Number.isInteger(value) ? new RoundedNumber(literal.trim(), value) : value;
  }
  const big = BigInt(literal);
  return big > MAX_SAFE || big < -MAX_SAFE ? big : Number(big);
}

/** The exact value of an element `JSON.parse` read as `parsed` from `literal`: re-read only when it may be rounded. */
function exactElement(parsed: unknown, literal: () => string): unknown {
  return typeof parsed === 'number' && !Number.isSafeInteger(parsed) ? exactNumber(literal()) : parsed;
}

function skipSpace(text: string, i: number): number {
  let k = i;
  for (;;) {
    const c = text.charCodeAt(k);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return k;
    k += 1;
  }
}

/** Index just past the string starting at `i` (a `"`). */
function stringEnd(text: string, i: number): number {
  let k = i + 1;
  while (k < text.length) {
    const c = text.charCodeAt(k);
    if (c === 0x22) return k + 1;
    k += c === 0x5c ? 2 : 1;
  }
  return text.length;
}

/** Index just past the number, `true`, `false` or `null` starting at `i`. */
function literalEnd(text: string, i: number): number {
  let k = i;
  for (; k < text.length; k += 1) {
    const c = text.charCodeAt(k);
    if (c === 0x2c || c === 0x5d || c === 0x7d || c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) break;
  }
  return k;
}

/** Index just past the JSON value starting at `i`. */
function valueEnd(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c === 0x22) return stringEnd(text, i);
  if (c !== 0x7b && c !== 0x5b) return literalEnd(text, i);
  let depth = 0;
  let k = i;
  while (k < text.length) {
    const d = text.charCodeAt(k);
    if (d === 0x22) {
      k = stringEnd(text, k);
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth += 1;
    else if (d === 0x7d || d === 0x5d) depth -= 1;
    k += 1;
    if (depth === 0) return k;
  }
  return text.length;
}

/** Characters that can only appear in an array holding more than numbers, `true`, `false` and `null`. */
const NOT_FLAT = /["[{]/;

/**
 * The array at `i` with its integer literals read exactly. `parsed` is what `JSON.parse` read for
 * it: only its elements that are numbers but not safe integers are read again. An array of plain
 * literals (the hash_ids case) is split at its commas; any other is walked value by value.
 */
function exactArray(text: string, i: number, parsed: unknown): { value: unknown[]; end: number } {
  const hint: readonly unknown[] = Array.isArray(parsed) ? parsed : [];
  const close = text.indexOf(']', i);
  const body = text.slice(i + 1, close);
  if (close < 0 || NOT_FLAT.test(body)) return walkArray(text, i, hint);
  if (hint.length === 0) return { value: [], end: close + 1 };
  const parts = body.split(',');
  const items = new Array<unknown>(parts.length);
  for (let n = 0; n < parts.length; n += 1) items[n] = exactElement(hint[n], () => parts[n] as string);
  return { value: items, end: close + 1 };
}

/** {@link exactArray} for an array that may hold strings, arrays or objects. */
function walkArray(text: string, i: number, hint: readonly unknown[]): { value: unknown[]; end: number } {
  const items: unknown[] = [];
  let k = skipSpace(text, i + 1);
  if (text.charCodeAt(k) === 0x5d) return { value: items, end: k + 1 };
  while (k < text.length) {
    const end = valueEnd(text, k);
    const from = k;
    items.push(exactElement(hint[items.length], () => text.slice(from, end)));
    k = skipSpace(text, end);
    if (text.charCodeAt(k) === 0x5d) return { value: items, end: k + 1 };
    k = skipSpace(text, k + 1);
  }
  return { value: items, end: text.length };
}

function keyAt(text: string, i: number, end: number): string {
  const raw = text.slice(i + 1, end - 1);
  return raw.includes('\\') ? (JSON.parse(text.slice(i, end)) as string) : raw;
}

/**
 * Sets `exact[key]` to the exact value at `i`, re-reading only what `parsed[key]` (the value
 * `JSON.parse` kept for the key, its last occurrence) may hold rounded; returns the index just past it.
 */
function readField(
  text: string,
  i: number,
  key: string,
  parsed: Record<string, unknown>,
  exact: Record<string, unknown>,
): number {
  if (text.charCodeAt(i) === 0x5b) {
    const read = exactArray(text, i, parsed[key]);
    exact[key] = read.value;
    return read.end;
  }
  const end = valueEnd(text, i);
  exact[key] = exactElement(parsed[key], () => text.slice(i, end));
  return end;
}

/**
 * Replaces the {@link TRACE_ID_FIELDS} of `row` with their exact values read from `text`: integers
 * beyond 2^53 − 1 become bigints, everything else is as `JSON.parse` read it. `text` must be the JSON
 * object `row` was parsed from (already known to be valid; other text ends the scan, never hangs it). A
 * repeated key ends with its last value, as with `JSON.parse`.
 */
export function readIdsExactly(text: string, row: Record<string, unknown>): void {
  const exact: Record<string, unknown> = {};
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) === 0x7b) i = skipSpace(text, i + 1);
  while (text.charCodeAt(i) === 0x22) {
    const keyEnd = stringEnd(text, i);
    const key = keyAt(text, i, keyEnd);
    i = skipSpace(text, skipSpace(text, keyEnd) + 1);
    const end = TRACE_ID_FIELDS.includes(key) ? readField(text, i, key, row, exact) : valueEnd(text, i);
    i = skipSpace(text, end);
    if (text.charCodeAt(i) !== 0x2c) break;
    i = skipSpace(text, i + 1);
  }
  Object.assign(row, exact);
}

/**
 * JSON text of a value read from a trace row, with bigints written as their full digits (where
 * `JSON.stringify` would throw) and a {@link RoundedNumber} as the file's text. Objects and arrays are walked only when they hold a bigint; other
 * values are written by `JSON.stringify`, so a row without bigints gives its `JSON.stringify` text.
 */
export function exactJson(value: unknown): string {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof RoundedNumber) return value.text;
  if (!holdsBigInt(value)) return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => exactJson(v)).join(',')}]`;
  const members: string[] = [];
  for (const [key, v] of Object.entries(value as Record<string, unknown>)) {
    if (v !== undefined) members.push(`${JSON.stringify(key)}:${exactJson(v)}`);
  }
  return `{${members.join(',')}}`;
}

function holdsBigInt(value: unknown): boolean {
  if (typeof value === 'bigint' || value instanceof RoundedNumber) return true;
  if (typeof value !== 'object' || value === null) return false;
  const items = Array.isArray(value) ? value : Object.values(value);
  return items.some(holdsBigInt);
}
