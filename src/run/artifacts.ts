/**
 * A run owns its artifact folder once its inputs are checked: it then removes every file an earlier
 * run or sweep of tokenload wrote there (by name; files it does not know are the user's and stay),
 * so nothing from an earlier run survives beside the new one, and says so; a run that stops on an
 * error after that leaves a summary that says it failed and why. A run that fails before (a bad
 * tokenizer, input file or server) leaves an earlier run's artifacts as they are.
 */
import type { Stats } from 'node:fs';
import { lstat, readdir, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { aiperfInputConfigOf } from '../config/aiperf-layout.js';
import { inputConfigOf } from '../config/input-config.js';
import type { ProfileConfig } from '../config/resolve.js';
import { ConfigError, InterruptedError, OutputError } from '../errors.js';
import {
  EXPORTERS,
  INPUTS_FILE_NAME,
  INPUTS_SPOOL_FILE_NAME,
  RAW_RECORDS_FILE_NAME,
  RECORDS_FILE_NAME,
  renderSummaryJson,
  SUMMARY_CSV_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
  TIMESLICES_CSV_FILE_NAME,
  TIMESLICES_JSON_FILE_NAME,
} from '../export/index.js';
import { failedStatus } from '../export/run-status.js';
import type { RunInfo } from '../export/summary-json.js';
import { ResponseChecks } from '../metrics/response-checks.js';
import { emptyTotals } from '../metrics/totals.js';
import { RUN_CHART_IDS } from '../report/charts.js';
import { REPORT_FILE_NAME } from '../report/html.js';
import { PLOTS_DIR_NAME } from '../report/png.js';
import { SERVER_METRICS_FILE_NAMES } from '../server-metrics/exports.js';
import { GPU_TELEMETRY_FILE_NAMES } from '../server-metrics/gpu-exports.js';
import { DirError, makeDirs, makeWritableDir } from '../util/make-dir.js';
import type { Logger } from '../util/run-env.js';
import { AGGREGATE_CSV_FILE_NAME, AGGREGATE_JSON_FILE_NAME } from './aggregate.js';
import {
  isSweepValueFolder,
  OLD_SWEEP_SUMMARY_FILE_NAMES,
  SWEEP_AGGREGATE_DIR_NAME,
  SWEEP_CSV_FILE_NAME,
  SWEEP_JSON_FILE_NAME,
} from './sweep.js';

/** The files of a multi-run's or sweep's aggregates (`aggregate/`, `sweep_aggregate/`), and an older tokenload's `sweep_summary.*`. */
const AGGREGATE_FILES: readonly string[] = [
  AGGREGATE_JSON_FILE_NAME,
  AGGREGATE_CSV_FILE_NAME,
  SWEEP_JSON_FILE_NAME,
  SWEEP_CSV_FILE_NAME,
  ...OLD_SWEEP_SUMMARY_FILE_NAMES,
];

/** The folder of a multi-run's runs (`profile_runs/run_0001/`, a sweep's `profile_runs/trial_0001/<value>/`) and of its aggregates. */
const PROFILE_RUNS_DIR_NAME = 'profile_runs';
const AGGREGATE_DIR_NAME = 'aggregate';

/**
 * The run's log, AIPerf's `logs/aiperf.log` (the name its users and tools look for): every line the
 * run logged on stderr (`[tokenload] …`, warnings included), each after its ISO time.
 */
export const RUN_LOG_DIR_NAME = 'logs';
export const RUN_LOG_FILE_NAME = 'aiperf.log';

/**
 * A logger that passes every line on to `log` and keeps it, time-stamped, for {@link writeRunLog}.
 */
export function recordingLogger(log: Logger): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string, message: string): void => {
    lines.push(`${new Date().toISOString()} ${level} ${message}`);
  };
  return {
    lines,
    log: {
      info: (m) => {
        keep('INFO', m);
        log.info(m);
      },
      warn: (m) => {
        keep('WARNING', m);
        log.warn(m);
      },
    },
  };
}

/**
 * Writes `lines` as `logs/aiperf.log` in `dir`.
 * @throws the file system error of a failed write.
 */
export async function writeRunLog(dir: string, lines: readonly string[]): Promise<void> {
  await makeDirs(join(dir, RUN_LOG_DIR_NAME));
  await writeFile(join(dir, RUN_LOG_DIR_NAME, RUN_LOG_FILE_NAME), lines.map((l) => `${l}\n`).join(''));
}

/**
 * The files a profile run writes into its artifact folder (`plots/` holds `tokenload plot`'s PNGs),
 * the server-metrics exports included, and the spool `inputs.json` is assembled from (left behind
 * only by a run that was killed).
 */
export const RUN_ARTIFACT_FILES: readonly string[] = [
  RECORDS_FILE_NAME,
  RAW_RECORDS_FILE_NAME,
  INPUTS_FILE_NAME,
  INPUTS_SPOOL_FILE_NAME,
  SUMMARY_JSON_FILE_NAME,
  SUMMARY_CSV_FILE_NAME,
  TIMESLICES_JSON_FILE_NAME,
  TIMESLICES_CSV_FILE_NAME,
  EXPORTERS.console.fileName,
  REPORT_FILE_NAME,
  ...SERVER_METRICS_FILE_NAMES,
  ...GPU_TELEMETRY_FILE_NAMES,
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
    return await clearSetFolder(dir, 0);
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
  const names = new Set([...RUN_ARTIFACT_FILES, ...AGGREGATE_FILES]);
  if (!names.has(basename(input))) return;
  // The run's folder, and the folder of the sweep or multi-run above it: each is cleared with the
  // run folders below it (value folders, profile_runs/run_NNNN/, trial_NNNN/, aggregate folders).
  let base = resolve(dir);
  while (isSetFolder(basename(base)) && dirname(base) !== base) base = dirname(base);
  const below = relative(base, dirname(input));
  const inCleared = below === '' || (!below.startsWith('..') && below.split(sep).every(isSetFolder));
  if (inCleared)
    throw new ConfigError(
      `--input-file ${inputFile} is one of the files this run replaces in --artifact-dir ${dir}: it would be removed before it is read; copy it out of the folder, or choose another --artifact-dir.`,
      '--input-file',
    );
}

/** Whether `name` is a folder a sweep or multi-run makes below its own (and clears with it). */
function isSetFolder(name: string): boolean {
  return (
    isSweepValueFolder(name) ||
    /^(run|trial)_\d{4}$/.test(name) ||
    [PROFILE_RUNS_DIR_NAME, AGGREGATE_DIR_NAME, SWEEP_AGGREGATE_DIR_NAME].includes(name)
  );
}

/**
 * Whether `dir` holds a file {@link clearRunArtifacts} would remove: an earlier run's or sweep's
 * artifacts, which a run that fails before it claims the folder must leave as they are.
 */
export async function holdsEarlierRun(dir: string): Promise<boolean> {
  const names = [...RUN_ARTIFACT_FILES, ...AGGREGATE_FILES];
  for (const folder of [dir, ...(await valueFolders(dir).catch(() => []))]) {
    const here = new Set(await namesIn(folder).catch(() => []));
    if (names.some((n) => here.has(n)) || here.has(PLOTS_DIR_NAME)) return true;
    if (here.has(PROFILE_RUNS_DIR_NAME) || here.has(AGGREGATE_DIR_NAME) || here.has(SWEEP_AGGREGATE_DIR_NAME))
      return true;
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
  if (await removeFile(join(dir, RUN_LOG_DIR_NAME, RUN_LOG_FILE_NAME))) removed++;
  await removeIfEmpty(join(dir, RUN_LOG_DIR_NAME));
  return removed + (await clearPlots(join(dir, PLOTS_DIR_NAME)));
}

/**
 * Removes the run and aggregate files of `dir`, then the same in each folder a sweep or multi-run
 * makes below it ({@link isSetFolder}: value folders, `profile_runs/`, `run_NNNN/`, `trial_NNNN/`,
 * `aggregate/`, `sweep_aggregate/`; at most 4 levels down), removing each such folder it empties.
 */
async function clearSetFolder(dir: string, depth: number): Promise<number> {
  let removed = await clearRunFiles(dir);
  for (const name of AGGREGATE_FILES) if (await removeFile(join(dir, name))) removed++;
  if (depth >= 4) return removed;
  for (const name of await namesIn(dir)) {
    const sub = join(dir, name);
    if (!isSetFolder(name) || !(await lstat(sub)).isDirectory()) continue;
    removed += await clearSetFolder(sub, depth + 1);
    await removeIfEmpty(sub);
  }
  return removed;
}

/** Removes folder `dir` when it exists and is empty. */
async function removeIfEmpty(dir: string): Promise<void> {
  const names = await namesIn(dir);
  if (
    names.length === 0 &&
    (await lstat(dir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  )
    await rmdir(dir);
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
  runInfo?: RunInfo,
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
    aiperfInputConfig: aiperfInputConfigOf(inputConfigOf(config)),
    ...(runInfo === undefined ? {} : { runInfo }),
    startTime,
    endTime: new Date(),
    wasCancelled: err instanceof InterruptedError,
    runStatus: failedStatus(err),
  });
  await writeFile(join(config.artifactDir, SUMMARY_JSON_FILE_NAME), text);
}
