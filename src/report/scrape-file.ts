/**
 * What the report reads of a run's scrape exports (server metrics, GPU telemetry): the scrape lines
 * of one JSONL file and the matching section of the run's summary.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { ScrapeLine } from '../server-metrics/snapshot.js';
import { readScrapeLines } from '../server-metrics/window.js';
import { RunLoadError } from './types.js';

/**
 * The scrape lines of `fileName` in the run folder `dir`; null when the run has no such file.
 * @throws {RunLoadError} naming the file and line of a malformed line.
 */
export async function readScrapeFile(dir: string, fileName: string): Promise<ScrapeLine[] | null> {
  const file = join(dir, fileName);
  const exists = await stat(file).then(
    (s) => s.isFile(),
    () => false,
  );
  if (!exists) return null;
  try {
    return await readScrapeLines(file);
  } catch (err) {
    throw new RunLoadError((err as Error).message, file);
  }
}

/**
 * The summary section `key` of the run in `dir` (`profile_export_aiperf.json`), as written; null
 * when it is absent or the summary cannot be read (the run loader reports a broken summary file).
 */
export async function readSummarySection<T>(dir: string, key: string): Promise<T | null> {
  try {
    const summary = JSON.parse(await readFile(join(dir, 'profile_export_aiperf.json'), 'utf8'));
    return (summary?.[key] as T | undefined) ?? null;
  } catch {
    return null;
  }
}
