/**
 * A run owns its artifact folder: at its start it removes every file an earlier run of tokenload
 * wrote there (by name; files it does not know are the user's and stay), so nothing from an earlier
 * run survives beside the new one; and a run that stops on an error after its start leaves a summary
 * that says it failed and why.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { OutputError } from '../errors.js';
import {
  EXPORTERS,
  INPUTS_FILE_NAME,
  RECORDS_FILE_NAME,
  renderSummaryJson,
  SUMMARY_CSV_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
} from '../export/index.js';
import { ResponseChecks } from '../metrics/response-checks.js';
import { emptyTotals } from '../metrics/totals.js';
import { REPORT_FILE_NAME } from '../report/html.js';
import { PLOTS_DIR_NAME } from '../report/png.js';
import { SERVER_METRICS_FILE_NAMES } from '../server-metrics/exports.js';
import { inputConfigOf, type ProfileConfig } from './config.js';
import { failedStatus } from './run-status.js';

/**
 * The files a profile run writes into its artifact folder (`plots/` holds `tokenload plot`'s PNGs),
 * the server-metrics exports included.
 */
export const RUN_ARTIFACT_FILES: readonly string[] = [
  RECORDS_FILE_NAME,
  INPUTS_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
  SUMMARY_CSV_FILE_NAME,
  EXPORTERS.console.fileName,
  REPORT_FILE_NAME,
  ...SERVER_METRICS_FILE_NAMES,
];

/**
 * Removes the artifacts of an earlier run from `dir`: the files of {@link RUN_ARTIFACT_FILES}, and the
 * `.png` files of `plots/` (the folder too when that leaves it empty). Any other file stays, and so
 * does a folder that has one of those names (not something tokenload wrote; the run's write to that
 * name then fails naming `--artifact-dir`).
 * @throws {OutputError} naming `--artifact-dir` when a file cannot be removed.
 */
export async function clearRunArtifacts(dir: string): Promise<void> {
  try {
    for (const name of RUN_ARTIFACT_FILES) await removeFile(join(dir, name));
    await clearPlots(join(dir, PLOTS_DIR_NAME));
  } catch (err) {
    if (typeof (err as NodeJS.ErrnoException).code !== 'string') throw err;
    throw new OutputError(
      `--artifact-dir ${dir}: cannot remove an earlier run's artifacts (${(err as Error).message})`,
      '--artifact-dir',
      err,
    );
  }
}

/**
 * Removes `path` when it is a file (or a link); a folder of that name is not ours and stays.
 * @returns whether `path` is gone.
 */
async function removeFile(path: string): Promise<boolean> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  if (stats.isDirectory()) return false;
  await rm(path, { force: true });
  return true;
}

async function clearPlots(plots: string): Promise<void> {
  let names: string[];
  try {
    names = await readdir(plots);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return;
    throw err;
  }
  let left = names.length;
  for (const name of names) if (name.endsWith('.png') && (await removeFile(join(plots, name)))) left--;
  if (left === 0) await rmdir(plots);
}

/**
 * Writes `profile_export_aiperf.json` for a run stopped by `err` after its start: the run's
 * configuration and a `run_status` of `failed` with the error as its reason, and no metric (what
 * was measured before the error, if anything, is in `profile_export.jsonl`).
 * @throws the file system error of a failed write.
 */
export async function writeFailedSummary(
  config: ProfileConfig,
  startTime: Date,
  err: unknown,
): Promise<void> {
  const summary = {
    metrics: {},
    errorSummary: [],
    warnings: [],
    totals: emptyTotals(false),
    responses: new ResponseChecks().section(),
    usageCheck: null,
    cacheCheck: null,
  };
  const text = renderSummaryJson({
    summary,
    inputConfig: inputConfigOf(config),
    startTime,
    endTime: new Date(),
    wasCancelled: false,
    runStatus: failedStatus(err),
  });
  await writeFile(join(config.artifactDir, SUMMARY_JSON_FILE_NAME), text);
}
