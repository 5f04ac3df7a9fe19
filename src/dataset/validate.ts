/**
 * Field validation for trace rows. Every failure is a {@link DatasetError} whose message reads
 * `<file>:<line>: field "<name>": expected <what>, got <value>`, so a user can jump to the row.
 *
 * Optional fields treat both a missing key and JSON `null` as "absent". Numbers are never coerced
 * from strings. These helpers are plain functions (no per-row closures) because loaders call them
 * for every row of million-row traces.
 */
import { DatasetError, type SourceRef } from './types.js';

/** A JSON object row. */
export type JsonObject = Record<string, unknown>;

const PREVIEW_CHARS = 40;

/** Short JSON rendering of a value for error messages (`missing` when undefined). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > PREVIEW_CHARS ? `${text.slice(0, PREVIEW_CHARS)}…` : text;
}

/**
 * Error for one bad field.
 * @param at the row's file and 1-based line.
 * @param field field name as written in the trace (may carry an index, e.g. `hash_ids[3]`).
 * @param expected what was wanted, e.g. `a positive integer`.
 */
export function fieldError(at: SourceRef, field: string, expected: string, got: unknown): DatasetError {
  const message = `${at.file}:${at.line}: field "${field}": expected ${expected}, got ${describeValue(got)}`;
  return new DatasetError(message, at.file, at.line, field);
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
  if (!isIntAtLeast(value, min)) throw fieldError(at, field, intExpectation(min), value);
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
  if (!isIntAtLeast(value, min)) throw fieldError(at, field, intExpectation(min), value);
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

/**
 * An optional array of integers (`hash_ids`); `[]` when absent or null. The parsed array is returned
 * as is, without copying.
 * @throws {DatasetError} naming the element (`hash_ids[i]`) that is not a safe integer.
 */
export function optionalIntArray(row: JsonObject, field: string, at: SourceRef): number[] {
  const value = row[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw fieldError(at, field, 'an array of integers', value);
  for (let i = 0; i < value.length; i += 1) {
    if (!Number.isSafeInteger(value[i])) throw fieldError(at, `${field}[${i}]`, 'an integer', value[i]);
  }
  return value as number[];
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
    `input_length > ${(count - 1) * blockSize}, got ${inputLength} (wrong block size?)`;
  throw new DatasetError(message, at.file, at.line, 'hash_ids');
}
