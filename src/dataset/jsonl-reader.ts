/**
 * Streaming JSONL reader shared by the trace loaders. Lines are read with `node:readline` over a file
 * stream, so memory stays flat whatever the file size; the per-line work is one `JSON.parse`, plus an
 * exact re-read of the id fields (`hash_ids`, `chat_id`, `parent_chat_id`, `session_id`) of the rare
 * row where one holds an integer beyond 2^53 (exact-ids.ts): those come out as bigints.
 *
 * Accepted layout: LF or CRLF line ends, blank or whitespace-only lines (skipped, line numbers still
 * count them), a last line without a newline, and a UTF-8 byte-order mark on the first line.
 */
import { createInterface } from 'node:readline';
import { compressedHint } from '../util/printable.js';
import { hasInexactId, readIdsExactly } from './exact-ids.js';
import { guardLines } from './line-guard.js';
import { openTraceFile } from './open-trace.js';
import { DatasetError } from './types.js';

/**
 * One parsed line: its 1-based line number in the file and the JSON value on it. In an object, the
 * top-level id fields hold their integers exactly (a bigint beyond 2^53 − 1; see exact-ids.ts).
 */
export interface JsonlRow {
  line: number;
  value: unknown;
}

/** Options of {@link readJsonl}. */
export interface JsonlReadOptions {
  /**
   * Called with the error for a line that is not valid JSON; the line is then skipped. When absent,
   * the error is thrown instead.
   */
  onBadJson?: (error: DatasetError) => void;
}

/** First-line prefix of a Git LFS pointer file (git-lfs spec v1). */
export const LFS_POINTER_PREFIX = 'version https://git-lfs.github.com/spec/v1';

const BYTE_ORDER_MARK = 0xfeff;

function lfsPointerError(file: string): DatasetError {
  return new DatasetError(
    `${file}: this is a Git LFS pointer file, not the trace itself. Download the real file ` +
      '(for GitHub, use the media.githubusercontent.com URL or `git lfs pull`).',
    file,
    1,
  );
}

function badJsonError(file: string, line: number, text: string, cause: unknown): DatasetError {
  const preview = text.length > 60 ? `${text.slice(0, 60)}…` : text;
  const reason = cause instanceof Error ? cause.message : String(cause);
  const hint = line === 1 ? compressedHint(text) : '';
  return new DatasetError(`${file}:${line}: not valid JSON${hint} (${reason}): ${preview}`, file, line);
}

/**
 * Reads a JSONL file line by line.
 * @param file path of the file, used as given in error messages.
 * @yields `{ line, value }` for every non-blank line, in file order; `line` is 1-based.
 * @throws {DatasetError} when the file cannot be opened, is a Git LFS pointer (first line starts
 *   with {@link LFS_POINTER_PREFIX}), or has a line that is not JSON (unless `onBadJson` is given).
 */
export async function* readJsonl(file: string, options: JsonlReadOptions = {}): AsyncGenerator<JsonlRow> {
  const handle = await openTraceFile(file);
  const lines = createInterface({
    input: guardLines(handle.createReadStream(), file),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let line = 0;
  try {
    for await (const raw of lines) {
      line += 1;
      let text = raw;
      if (line === 1) {
        if (text.charCodeAt(0) === BYTE_ORDER_MARK) text = text.slice(1);
        if (text.startsWith(LFS_POINTER_PREFIX)) throw lfsPointerError(file);
      }
      if (text.length === 0) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        if (text.trim().length === 0) continue;
        const error = badJsonError(file, line, text, err);
        if (options.onBadJson === undefined) throw error;
        options.onBadJson(error);
        continue;
      }
      if (typeof value === 'object' && value !== null && hasInexactId(value as Record<string, unknown>))
        readIdsExactly(text, value as Record<string, unknown>);
      yield { line, value };
    }
  } finally {
    lines.close();
    await handle.close();
  }
}
