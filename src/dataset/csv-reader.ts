/**
 * Streaming CSV reader for the CSV trace formats (Azure LLM inference, BurstGPT). Columns are picked
 * by header NAME, never by position, because later releases insert columns (BurstGPT `_3`).
 *
 * Accepted layout: LF or CRLF line ends, a last line without a newline, a UTF-8 byte-order mark,
 * blank lines (skipped, still counted for line numbers), RFC 4180 double-quoted cells with `""`
 * escapes inside one line. A quoted cell spanning lines is not supported (the line is reported as
 * malformed). Header names are matched after trimming, ignoring ASCII case; the first of two equal
 * names wins.
 */
import { createInterface } from 'node:readline';
import { type JsonlReadOptions, type JsonlRow, LFS_POINTER_PREFIX } from './jsonl-reader.js';
import { guardLines } from './line-guard.js';
import { openTraceFile } from './open-trace.js';
import type { RowReader } from './trace-rows.js';
import { DatasetError } from './types.js';

/**
 * The cells of one data row, in the order of the wanted columns given to {@link csvRowReader};
 * `undefined` for an optional column the header does not have.
 */
export type CsvCells = readonly (string | undefined)[];

/** Columns a format reads: required ones must be in the header, optional ones may be absent. */
export interface CsvColumns {
  required: readonly string[];
  optional?: readonly string[];
}

const BYTE_ORDER_MARK = 0xfeff;
const QUOTE = '"';

/**
 * Splits one CSV line into cells (RFC 4180 quoting within the line).
 * @returns the cells, or undefined when a quoted cell is not closed on this line or a quote is
 *   followed by something other than a comma.
 */
export function splitCsvLine(text: string): string[] | undefined {
  if (!text.includes(QUOTE)) return text.split(',');
  const cells: string[] = [];
  let i = 0;
  for (;;) {
    if (text[i] === QUOTE) {
      const quoted = readQuotedCell(text, i + 1);
      if (quoted === undefined) return undefined;
      cells.push(quoted.cell);
      i = quoted.next;
      if (i === text.length) return cells;
      if (text[i] !== ',') return undefined;
    } else {
      const comma = text.indexOf(',', i);
      const end = comma === -1 ? text.length : comma;
      cells.push(text.slice(i, end));
      if (comma === -1) return cells;
      i = comma;
    }
    i += 1;
    if (i === text.length) {
      cells.push('');
      return cells;
    }
  }
}

/** Reads a quoted cell whose content starts at `start`; `next` is the index after the closing quote. */
function readQuotedCell(text: string, start: number): { cell: string; next: number } | undefined {
  let cell = '';
  let i = start;
  for (;;) {
    const quote = text.indexOf(QUOTE, i);
    if (quote === -1) return undefined;
    cell += text.slice(i, quote);
    if (text[quote + 1] !== QUOTE) return { cell, next: quote + 1 };
    cell += QUOTE;
    i = quote + 2;
  }
}

function normalizeName(name: string): string {
  return name.trim().toLowerCase();
}

/**
 * Header position of every wanted column (required first, then optional; -1 for a missing optional).
 * @param headerLine 1-based line number of the header, for the error message.
 * @throws {DatasetError} at the header line, field = the column, when a required column is missing.
 */
export function resolveCsvColumns(
  file: string,
  headerLine: number,
  header: readonly string[],
  columns: CsvColumns,
): number[] {
  const positions = new Map<string, number>();
  header.forEach((name, index) => {
    const key = normalizeName(name);
    if (!positions.has(key)) positions.set(key, index);
  });
  const found = header.map((h) => JSON.stringify(h.trim())).join(', ');
  const required = columns.required.map((name) => {
    const index = positions.get(normalizeName(name));
    if (index !== undefined) return index;
    throw new DatasetError(
      `${file}:${headerLine}: field "${name}": required column missing from the CSV header (found ${found})`,
      file,
      headerLine,
      name,
    );
  });
  const optional = (columns.optional ?? []).map((name) => positions.get(normalizeName(name)) ?? -1);
  return [...required, ...optional];
}

function badLineError(file: string, line: number, reason: string): DatasetError {
  return new DatasetError(`${file}:${line}: malformed CSV line: ${reason}`, file, line);
}

/** Picks the wanted cells of a data line, or returns the reason the line is malformed. */
function pickCells(text: string, width: number, wanted: readonly number[]): CsvCells | string {
  const cells = splitCsvLine(text);
  if (cells === undefined) return 'unbalanced double quotes';
  if (cells.length !== width) return `expected ${width} cells like the header, got ${cells.length}`;
  return wanted.map((index) => (index === -1 ? undefined : cells[index]));
}

/**
 * A {@link RowReader} for a CSV file with a header line: it yields `{ line, value }` per non-blank
 * data line, `value` being the {@link CsvCells} of `columns` in order (required, then optional).
 * A data line with unbalanced quotes or a cell count different from the header's goes to
 * `onBadJson` when given, and is thrown otherwise.
 * @throws {DatasetError} when the file cannot be opened, is a Git LFS pointer, has no header, or lacks
 *   a required column (field = the column name).
 */
export function csvRowReader(columns: CsvColumns): RowReader {
  return (file, options) => readCsvRows(file, columns, options);
}

async function* readCsvRows(
  file: string,
  columns: CsvColumns,
  options: JsonlReadOptions,
): AsyncGenerator<JsonlRow> {
  const handle = await openTraceFile(file);
  const lines = createInterface({
    input: guardLines(handle.createReadStream(), file),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let line = 0;
  let width = 0;
  let wanted: number[] | undefined;
  try {
    for await (const raw of lines) {
      line += 1;
      const text = line === 1 ? checkFirstLine(file, raw) : raw;
      if (text.trim().length === 0) continue;
      if (wanted === undefined) {
        const header = splitCsvLine(text);
        if (header === undefined) throw badLineError(file, line, 'unbalanced double quotes in the header');
        width = header.length;
        wanted = resolveCsvColumns(file, line, header, columns);
        continue;
      }
      const cells = pickCells(text, width, wanted);
      if (typeof cells !== 'string') {
        yield { line, value: cells };
        continue;
      }
      const error = badLineError(file, line, cells);
      if (options.onBadJson === undefined) throw error;
      options.onBadJson(error);
    }
  } finally {
    lines.close();
    await handle.close();
  }
  if (wanted === undefined) throw new DatasetError(`${file}: empty CSV file (no header line)`, file);
}

function checkFirstLine(file: string, raw: string): string {
  const text = raw.charCodeAt(0) === BYTE_ORDER_MARK ? raw.slice(1) : raw;
  if (text.startsWith(LFS_POINTER_PREFIX)) {
    throw new DatasetError(
      `${file}: this is a Git LFS pointer file, not the trace itself. Download the real file ` +
        '(for GitHub, use the media.githubusercontent.com URL or `git lfs pull`).',
      file,
      1,
    );
  }
  return text;
}

/**
 * Narrows a row value produced by {@link csvRowReader} back to its cells.
 * @throws {TypeError} when the value is not an array (a programming error, not bad input).
 */
export function asCsvCells(value: unknown): CsvCells {
  if (!Array.isArray(value)) throw new TypeError('expected CSV cells from csvRowReader');
  return value as CsvCells;
}
