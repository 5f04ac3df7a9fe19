/**
 * Whether a Mooncake trace's rows carry timestamps, read before the run is configured, so that the
 * fixed schedule a `mooncake_trace` implies applies only to a trace that has a schedule: AIPerf turns
 * the fixed schedule on for a trace dataset only when one of its rows has a non-null `timestamp`
 * (its user config, `_should_use_fixed_schedule_for_trace_dataset`), and otherwise sends the rows
 * by `--concurrency` or `--request-rate` (custom-prompt-benchmarking tutorial: `text_input` rows,
 * no timestamps, `--concurrency 2`). Reading stops at the first timestamped row, so a timestamped
 * trace costs one line; a file without any is read to its end.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';

/** Bytes read at a time. */
const CHUNK_BYTES = 1 << 20;

/** True when the JSONL line is an object with a `timestamp` that is not null. */
function lineHasTimestamp(line: string): boolean {
  if (!line.includes('"timestamp"')) return false;
  try {
    const row: unknown = JSON.parse(line);
    const value =
      typeof row === 'object' && row !== null ? (row as Record<string, unknown>).timestamp : undefined;
    return value !== undefined && value !== null;
  } catch {
    // A malformed line is the loader's to report, with its file and line.
    return true;
  }
}

/**
 * Whether any row of the JSONL `file` has a non-null `timestamp`. A file that cannot be read, or a
 * folder, answers true: the fixed schedule stays, and the loader reports the file's problem.
 */
export function anyRowTimestamped(file: string): boolean {
  let fd: number;
  try {
    if (!statSync(file).isFile()) return true;
    fd = openSync(file, 'r');
  } catch {
    return true;
  }
  try {
    return scan(fd);
  } finally {
    closeSync(fd);
  }
}

function scan(fd: number): boolean {
  const buffer = Buffer.alloc(CHUNK_BYTES);
  let carry = '';
  for (let read = readSync(fd, buffer); read > 0; read = readSync(fd, buffer)) {
    const lines = (carry + buffer.toString('utf8', 0, read)).split('\n');
    carry = lines.pop() ?? '';
    if (lines.some(lineHasTimestamp)) return true;
  }
  return lineHasTimestamp(carry);
}
