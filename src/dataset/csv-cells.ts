/**
 * Typed reading of CSV cells. Cells are trimmed; numbers must be plain decimal text (no sign, no
 * thousands separators), so `"-3"`, `"1,000"` or `"abc"` are errors naming file, line and column.
 */
import type { SourceRef } from './types.js';
import { fieldError } from './validate.js';

const UNSIGNED_INT = /^\d+$/;
const UNSIGNED_DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * An integer cell at least `min`.
 * @param column the column name as written in the header, used as the error's field.
 * @throws {DatasetError} when missing, not an unsigned decimal integer, not safe, or below `min`.
 */
export function intCell(cell: string | undefined, column: string, min: number, at: SourceRef): number {
  const text = cell?.trim();
  const value = text !== undefined && UNSIGNED_INT.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min) {
    const expected = min === 0 ? 'a non-negative integer' : `an integer >= ${min}`;
    throw fieldError(at, column, expected, cell);
  }
  return value;
}

/**
 * A non-negative decimal number cell (e.g. seconds `12.5`, `3e2`).
 * @throws {DatasetError} when missing, signed, not a decimal number, or not finite.
 */
export function nonNegativeCell(cell: string | undefined, column: string, at: SourceRef): number {
  const text = cell?.trim();
  const value = text !== undefined && UNSIGNED_DECIMAL.test(text) ? Number(text) : Number.NaN;
  if (!Number.isFinite(value)) throw fieldError(at, column, 'a number >= 0', cell);
  return value;
}

/** An optional text cell: trimmed, undefined when the column is absent or the cell is empty. */
export function optionalTextCell(cell: string | undefined): string | undefined {
  const text = cell?.trim();
  return text === undefined || text.length === 0 ? undefined : text;
}
