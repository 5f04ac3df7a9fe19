/**
 * A run owns its artifact folder once its inputs are checked: it then removes every file an earlier
 * run or sweep of tokenload wrote there (by name; files it does not know are the user's and stay),
 * so nothing from an earlier run survives beside the new one, and says so; a run that stops on an
 * error after that leaves a summary that says it failed and why. A run that fails before (a bad
 * tokenizer, input file or server) leaves an earlier run's artifacts as they are.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { inputConfigOf } from '../config/input-config.js';
import type { ProfileConfig } from '../config/resolve.js';
import { ConfigError, InterruptedError, OutputError } from '../errors.js';
import {
  EXPORTERS,
  INPUTS_FILE_NAME,
  INPUTS_SPOOL_FILE_NAME,
  RECORDS_FILE_NAME,
  renderSummaryJson,
  SUMMARY_CSV_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
  TIMESLICES_CSV_FILE_NAME,
  TIMESLICES_JSON_FILE_NAME,
} from '../export/index.js';
import { failedStatus } from '../export/run-status.js';
import { ResponseChecks } from '../metrics/response-checks.js';
import { emptyTotals } from '../metrics/totals.js';
import { RUN_CHART_IDS } from '../report/charts.js';
import { REPORT_FILE_NAME } from '../report/html.js';
import { PLOTS_DIR_NAME } from '../report/png.js';
import { SERVER_METRICS_FILE_NAMES } from '../server-metrics/exports.js';
import { DirError, makeWritableDir } from '../util/make-dir.js';
import type { Logger } from '../util/run-env.js';
import { isSweepValueFolder, SWEEP_SUMMARY_FILE_NAMES } from './sweep.js';

/**
 * The files a profile run writes into its artifact folder (`plots/` holds `tokenload plot`'s PNGs),
 * the server-metrics exports included, and the spool `inputs.json` is assembled from (left behind
 * only by a run that was killed).
 */
export const RUN_ARTIFACT_FILES: readonly string[] = [
  RECORDS_FILE_NAME,
  INPUTS_FILE_NAME,
  INPUTS_SPOOL_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
  SUMMARY_CSV_FILE_NAME,
  TIMESLICES_JSON_FILE_NAME,
  TIMESLICES_CSV_FILE_NAME,
  EXPORTERS.console.fileName,
  REPORT_FILE_NAME,
  ...SERVER_METRICS_FILE_NAMES,
];

/**
 * Removes what an earlier run or sweep of tokenload left in `dir`: the files of
 * {@link RUN_ARTIFACT_FILES} and `tokenload plot`'s PNGs (by chart id) in `plots/`; a sweep's
 * `sweep_summary.*`; and in each sweep value folder (`concurrency4/`, `request_rate2.5/`) the same
 * run files and plots. A folder (`plots/`, a value folder) goes only when that leaves it empty. Any
 * other file stays, and so does a folder that has one of those file names (not something tokenload
 * wrote; the run's write to that name then fails naming `--artifact-dir`).
 * @returns how many files were removed (0: nothing of an earlier run was there).
 * @throws {OutputError} naming `--artifact-dir` when a file cannot be removed.
 */
export async function clearRunArtifacts(dir: string): Promise<number> {
  try {
    let removed = await clearRunFiles(dir);
    for (const name of SWEEP_SUMMARY_FILE_NAMES) if (await removeFile(join(dir, name))) removed++;
    for (const valueDir of await valueFolders(dir)) {
      removed += await clearRunFiles(valueDir);
      if ((await namesIn(valueDir)).length === 0) await rmdir(valueDir);
    }
    return removed;
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
 * Refuses an input file that is one of the files this run (or the sweep it belongs to) removes and
 * writes in its artifact folder, e.g. an earlier run's `inputs.json` given as `--input-file` with the
 * same `--artifact-dir`: the run would delete its own input before reading it.
 * @throws {ConfigError} naming `--input-file` and the folder.
 */
export function refuseInputAmongArtifacts(inputFile: string | null, dir: string): void {
  if (inputFile === null) return;
  const input = resolve(inputFile);
  const names = new Set([...RUN_ARTIFACT_FILES, ...SWEEP_SUMMARY_FILE_NAMES]);
  if (!names.has(basename(input))) return;
  const runDir = resolve(dir);
  // The run's folder, or the sweep folder above a value folder: each is cleared with its value folders.
  const cleared = isSweepValueFolder(basename(runDir)) ? [runDir, dirname(runDir)] : [runDir];
  const at = dirname(input);
  const inCleared = cleared.some((d) => at === d || (isSweepValueFolder(basename(at)) && dirname(at) === d));
  if (inCleared)
    throw new ConfigError(
      `--input-file ${inputFile} is one of the files this run replaces in --artifact-dir ${dir}: it would be removed before it is read; copy it out of the folder, or choose another --artifact-dir.`,
      '--input-file',
    );
}

/**
 * Whether `dir` holds a file {@link clearRunArtifacts} would remove: an earlier run's or sweep's
 * artifacts, which a run that fails before it claims the folder must leave as they are.
 */
export async function holdsEarlierRun(dir: string): Promise<boolean> {
  const names = [...RUN_ARTIFACT_FILES, ...SWEEP_SUMMARY_FILE_NAMES];
  for (const folder of [dir, ...(await valueFolders(dir).catch(() => []))]) {
    const here = new Set(await namesIn(folder).catch(() => []));
    if (names.some((n) => here.has(n)) || here.has(PLOTS_DIR_NAME)) return true;
  }
  return false;
}

/**
 * Makes `dir` this run's (or this sweep's) once its inputs have been checked: creates it (again:
 * a sweep's claim may have removed an empty value folder), removes an earlier run's artifacts
 * ({@link clearRunArtifacts}) and says so on `log`, naming the folder.
 * @throws {OutputError} naming `--artifact-dir` for a folder that cannot be created or cleared.
 */
export async function claimArtifactDir(dir: string, log: Logger): Promise<void> {
  await createArtifactDir(dir);
  const removed = await clearRunArtifacts(dir);
  if (removed > 0)
    log.info(
      `${dir}: replacing an earlier run's artifacts (${removed} ${removed === 1 ? 'file' : 'files'} removed)`,
    );
}

/**
 * Creates a run's (or sweep's) artifact folder and checks that a file can be written in it, before
 * anything in it is changed (util/make-dir.ts: never Node's recursive mkdir, which reports a
 * read-only file system as ENOENT and spins forever under `/proc`).
 * @throws {OutputError} naming `--artifact-dir` and why it cannot be created or written (read-only,
 *   no permission, a file in the way, a virtual file system).
 */
export async function createArtifactDir(dir: string): Promise<void> {
  try {
    await makeWritableDir(dir);
  } catch (err) {
    if (!(err instanceof DirError)) throw err;
    throw new OutputError(`--artifact-dir ${dir}: ${err.describe(dir)}`, '--artifact-dir', err);
  }
}

/** Removes a run's files and plots from `dir`; returns how many were removed. */
async function clearRunFiles(dir: string): Promise<number> {
  let removed = 0;
  for (const name of RUN_ARTIFACT_FILES) if (await removeFile(join(dir, name))) removed++;
  return removed + (await clearPlots(join(dir, PLOTS_DIR_NAME)));
}

/** The sweep value folders in `dir` (folders only). */
async function valueFolders(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const name of await namesIn(dir)) {
    if (!isSweepValueFolder(name)) continue;
    const valueDir = join(dir, name);
    if ((await lstat(valueDir)).isDirectory()) out.push(valueDir);
  }
  return out;
}

/** The names in folder `dir`; none when it does not exist or is not a folder. */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}

/**
 * Removes `path` when it is a file (or a link); a folder of that name is not ours and stays.
 * @returns whether a file was removed (false: there was none, or a folder of that name).
 */
async function removeFile(path: string): Promise<boolean> {
  let stats: Stats;
  try {
    stats = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
  if (stats.isDirectory()) return false;
  await rm(path, { force: true });
  return true;
}

/**
 * Removes `tokenload plot`'s PNGs (`<chart id>.png`) from `plots`, and the folder if that empties
 * it; returns how many were removed.
 */
async function clearPlots(plots: string): Promise<number> {
  const names = await namesIn(plots);
  if (names.length === 0) return 0;
  const ours = new Set(RUN_CHART_IDS.map((id) => `${id}.png`));
  let removed = 0;
  for (const name of names) if (ours.has(name) && (await removeFile(join(plots, name)))) removed++;
  if (removed === names.length) await rmdir(plots);
  return removed;
}

/**
 * Writes `profile_export_aiperf.json` for a run stopped by `err` after its start: the run's
 * configuration and a `run_status` of `failed` with the error as its reason (`interrupted` and
 * `was_cancelled` for Ctrl-C during a start-up step: {@link failedStatus}), and no metric (what
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
    wasCancelled: err instanceof InterruptedError,
    runStatus: failedStatus(err),
  });
  await writeFile(join(config.artifactDir, SUMMARY_JSON_FILE_NAME), text);
}
