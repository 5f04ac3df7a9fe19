/**
 * Reading and writing `search_history.json`. A write goes to a temporary file in the same folder,
 * then is renamed over the old one, so a reader (or a crash) never sees half a file.
 */
import { existsSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, OutputError } from '../errors.js';
import { parseSearchHistory } from '../report/search-history.js';
import { SEARCH_HISTORY_FILE_NAME, type SearchHistory } from './history-types.js';

/** The history file of the search folder `dir`. */
export function historyPath(dir: string): string {
  return join(dir, SEARCH_HISTORY_FILE_NAME);
}

/**
 * Writes `history` into `dir` atomically (temporary file, then rename).
 * @throws {OutputError} naming the file when it cannot be written.
 */
export async function writeHistory(dir: string, history: SearchHistory): Promise<void> {
  const path = historyPath(dir);
  const temp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(history, null, 2)}\n`);
    await rename(temp, path);
  } catch (err) {
    throw new OutputError(
      `${path}: cannot write the search history (${(err as Error).message})`,
      '--artifact-dir',
      err,
    );
  }
}

/**
 * The history of the search folder `dir`, for `--resume`.
 * @throws {ConfigError} naming `--resume` when `dir` holds no readable history, or one with a bad
 *   field (named).
 */
export async function readHistory(dir: string): Promise<SearchHistory> {
  const path = historyPath(dir);
  if (!existsSync(path))
    throw new ConfigError(
      `--resume ${dir}: no ${SEARCH_HISTORY_FILE_NAME} there (not a search folder)`,
      '--resume',
    );
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as SearchHistory;
    if (parsed.schema_version !== '1.0' || !Array.isArray(parsed.iterations))
      throw new Error('not a tokenload search history');
    // Every field the search reads back, checked (a hand-edited or damaged file names its bad field).
    parseSearchHistory(parsed, path);
    return parsed;
  } catch (err) {
    throw new ConfigError(`--resume ${dir}: ${path} cannot be read: ${(err as Error).message}`, '--resume');
  }
}
