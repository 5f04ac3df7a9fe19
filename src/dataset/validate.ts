/**
 * Field validation for trace rows. Every failure is a {@link DatasetError} whose message reads
 * `<file>:<line>: field "<name>": expected <what>, got <value>`, so a user can jump to the row.
 *
 * Optional fields treat both a missing key and JSON `null` as "absent". Numbers are never coerced
 * from strings. These helpers are plain functions (no per-row closures) because loaders call them
 * for every row of million-row traces.
 */
import { exactJson, MAX_HASH_ID, RoundedNumber } from './exact-ids.js';
import { DatasetError, type SourceRef, type TraceId } from './types.js';

/** A JSON object row. */
export type JsonObject = Record<string, unknown>;

const PREVIEW_CHARS = 40;

/** Short JSON rendering of a value for error messages (`missing` when undefined). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = exactJson(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

/**
 * Error for one bad field.
 * @param at the row's file and 1-based line.
 * @param field field name as written in the trace (may carry an index, e.g. `hash_ids[3]`).
 * @param expected what was wanted, e.g. `a positive integer`.
 * @param why an explanation appended after the value, e.g. `(more than 64 bits)`.
 */
export function fieldError(
  at: SourceRef,
  field: string,
  expected: string,
  got: unknown,
  why?: string,
): DatasetError {
  const reason = why === undefined ? '' : ` ${why}`;
  const message = `${at.file}:${at.line}: field "${field}": expected ${expected}, got ${describeValue(got)}${reason}`;
  return new DatasetError(message, at.file, at.line, field);
}

/** Why a count-like field refuses an integer beyond 2^53 − 1 (JSON.parse could not even read it exactly). */
const UNSAFE_INTEGER_WHY =
  '(shown rounded: it is beyond 2^53 - 1, the largest integer a JSON number holds exactly)';

/** The reason to add for an integer that is too large to be read exactly, else undefined. */
function unsafeIntegerWhy(value: unknown): string | undefined {
  const big = typeof value === 'bigint' || (Number.isInteger(value) && !Number.isSafeInteger(value));
  return big ? UNSAFE_INTEGER_WHY : undefined;
}

function intError(at: SourceRef, field: string, min: number | undefined, value: unknown): DatasetError {
  return fieldError(at, field, intExpectation(min), value, unsafeIntegerWhy(value));
}

/**
 * Checks that a parsed JSON value is an object (not an array or null).
 * @throws {DatasetError} naming file and line otherwise.
 */
export function asObject(value: unknown, at: SourceRef): JsonObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const message = `${at.file}:${at.line}: expected a JSON object per line, got ${describeValue(value)}`;
    throw new DatasetError(message, at.file, at.line);
  }
  return value as JsonObject;
}

function intExpectation(min: number | undefined): string {
  if (min === 1) return 'a positive integer';
  if (min === 0) return 'a non-negative integer';
  return min === undefined ? 'an integer' : `an integer >= ${min}`;
}

function isIntAtLeast(value: unknown, min: number | undefined): value is number {
  return Number.isSafeInteger(value) && (min === undefined || (value as number) >= min);
}

/**
 * A required integer field.
 * @param min smallest allowed value (inclusive); undefined for any integer.
 * @throws {DatasetError} when missing, not a safe integer, or below `min`.
 */
export function requiredInt(row: JsonObject, field: string, min: number | undefined, at: SourceRef): number {
  const value = row[field];
  if (!isIntAtLeast(value, min)) throw intError(at, field, min, value);
  return value;
}

/**
 * An optional integer field; `fallback` when absent or null.
 * @throws {DatasetError} when present but not a safe integer at least `min`.
 */
export function optionalInt<F extends number | undefined>(
  row: JsonObject,
  field: string,
  min: number | undefined,
  fallback: F,
  at: SourceRef,
): number | F {
  const value = row[field];
  if (value === undefined || value === null) return fallback;
  if (!isIntAtLeast(value, min)) throw intError(at, field, min, value);
  return value;
}

function isFiniteAtLeastZero(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

/**
 * A required finite number ≥ 0 (timestamps, delays).
 * @throws {DatasetError} when missing, not a number, negative or not finite.
 */
export function requiredNonNegative(row: JsonObject, field: string, at: SourceRef): number {
  const value = row[field];
  if (!isFiniteAtLeastZero(value)) throw fieldError(at, field, 'a number >= 0', value);
  return value;
}

/**
 * An optional finite number ≥ 0; undefined when absent or null.
 * @throws {DatasetError} when present but not a finite number ≥ 0.
 */
export function optionalNonNegative(row: JsonObject, field: string, at: SourceRef): number | undefined {
  const value = row[field];
  if (value === undefined || value === null) return undefined;
  if (!isFiniteAtLeastZero(value)) throw fieldError(at, field, 'a number >= 0', value);
  return value;
}

/**
 * An optional string; `fallback` when absent or null.
 * @throws {DatasetError} when present but not a string.
 */
export function optionalString<F extends string | undefined>(
  row: JsonObject,
  field: string,
  fallback: F,
  at: SourceRef,
): string | F {
  const value = row[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') throw fieldError(at, field, 'a string', value);
  return value;
}

/**
 * An optional JSON object (not an array); undefined when absent or null.
 * @throws {DatasetError} when present but not an object.
 */
export function optionalObject(row: JsonObject, field: string, at: SourceRef): JsonObject | undefined {
  const value = row[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw fieldError(at, field, 'a JSON object', value);
  return value as JsonObject;
}

/** True for an integer read exactly: a safe-integer number or a bigint (exact-ids.ts). */
export function isExactInteger(value: unknown): value is TraceId {
  return typeof value === 'bigint' || Number.isSafeInteger(value);
}

/**
 * A required identifier (`chat_id`): any integer, read exactly whatever its size.
 * @throws {DatasetError} when missing or not an integer (a fraction, an exponent form beyond 2^53).
 */
export function requiredId(row: JsonObject, field: string, at: SourceRef): TraceId {
  const value = row[field];
  if (!isExactInteger(value)) throw fieldError(at, field, 'an integer', value, inexactWhy(value));
  return value;
}

/**
 * An optional identifier (`parent_chat_id`); `fallback` when absent or null.
 * @throws {DatasetError} when present but not an integer.
 */
export function optionalId(row: JsonObject, field: string, fallback: TraceId, at: SourceRef): TraceId {
  const value = row[field];
  if (value === undefined || value === null) return fallback;
  if (!isExactInteger(value)) throw fieldError(at, field, 'an integer', value, inexactWhy(value));
  return value;
}

/** Why a number beyond 2^53 that is not written as plain digits cannot be an identifier. */
function inexactWhy(value: unknown): string | undefined {
  return (typeof value === 'number' && Number.isInteger(value)) || value instanceof RoundedNumber
    ? '(beyond 2^53 an id must be written as plain integer digits, without a fraction or an exponent, to be read exactly)'
    : undefined;
}

const HASH_ID_EXPECTATION = 'a block hash: an integer from 0 to 2^64 - 1 (18446744073709551615)';

function hashIdWhy(value: unknown): string | undefined {
  if (typeof value === 'bigint') return value < 0n ? '(negative)' : '(more than 64 bits)';
  const n = value instanceof RoundedNumber ? value.value : value;
  if (typeof n !== 'number') return undefined;
  if (n < 0) return '(negative)';
  return inexactWhy(value);
}

/**
 * The block ids of a row (`hash_ids`): `[]` when absent or null. Each id is an integer from 0 to
 * 2^64 − 1 (a salted 64-bit hash in the Bailian release), read exactly as a {@link TraceId}. The
 * parsed array is returned as is, without copying.
 * @throws {DatasetError} naming the element (`hash_ids[i]`) and why: negative, a fraction, more
 *   than 64 bits, or beyond 2^53 without plain digits.
 */
export function optionalHashIds(row: JsonObject, field: string, at: SourceRef): TraceId[] {
  const value = row[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(at, field, 'an array of block hashes', value);
  for (let i = 0; i < value.length; i += 1) {
    const id: unknown = value[i];
    const ok =
      typeof id === 'number'
        ? Number.isSafeInteger(id) && id >= 0
        : typeof id === 'bigint' && id >= 0n && id <= MAX_HASH_ID;
    if (!ok) throw fieldError(at, `${field}[${i}]`, HASH_ID_EXPECTATION, id, hashIdWhy(id));
  }
  return value as TraceId[];
}

/**
 * A session id given as a string or an integer (read exactly), as a string; undefined when absent or
 * null. `field` is the name used in the error (may carry a prefix, e.g. `turns[0].session_id`).
 * @throws {DatasetError} when present but neither a string nor an integer.
 */
export function sessionIdString(value: unknown, field: string, at: SourceRef): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (isExactInteger(value)) return String(value);
  throw fieldError(at, field, 'a string or an integer', value, inexactWhy(value));
}

/**
 * Checks that `count` block ids fit a prompt of `inputLength` tokens at `blockSize` tokens per block.
 * Rule (AIPerf prompt assembly): ids are too many when `inputLength ≤ (count − 1) · blockSize`, i.e. the
 * last id would name an empty block. Fewer ids than blocks is allowed: the uncovered tail is fresh
 * input. Source: AIPerf `src/aiperf/dataset/generator/prompt.py` (newest mainline).
 * @throws {DatasetError} naming file, line and `hash_ids`.
 */
export function checkHashIdsFit(count: number, inputLength: number, blockSize: number, at: SourceRef): void {
  if (count === 0 || inputLength > (count - 1) * blockSize) return;
  const message =
    `${at.file}:${at.line}: field "hash_ids": ${count} block ids at ${blockSize} tokens per block need ` +
    `input_length > ${(count - 1) * blockSize}, got ${inputLength} (another trace format, or another block size? ` +
    `check --custom-dataset-type first: Bailian rows (chat_id, parent_chat_id, turn) are bailian_trace, whose ` +
    `timestamps are seconds and blocks 16 tokens; Mooncake's are milliseconds and 512; then --isl-block-size)`;
  throw new DatasetError(message, at.file, at.line, 'hash_ids');
}
