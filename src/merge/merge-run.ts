/**
 * `tokenload merge`: the shards of one sharded run made into one run's artifacts. Every metric is
 * recomputed from the shards' per-request records with the code a single run uses (the records are
 * read back exactly by export/record-reader.ts and folded by metrics/summary.ts): percentiles over
 * the raw values of every shard, the benchmark window from the first request start to the last
 * response of any shard, throughputs and goodput over it, the error summary, the usage and cache
 * checks. Nothing is written unless the shards make a whole run or `--allow-partial` is given.
 */

import { rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { aiperfInputConfigOf } from '../config/aiperf-layout.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import { endpointPathFor, requestPathFor } from '../endpoint/types.js';
import { ConfigError } from '../errors.js';
import { EXPORTERS, INPUTS_FILE_NAME, RECORDS_FILE_NAME, writeSummaryFiles } from '../export/index.js';
import { LineSink } from '../export/line-sink.js';
import { EpochBase } from '../export/record-reader.js';
import type { RequestTarget } from '../export/run-status.js';
import type { RunStatus, SummaryExportContext } from '../export/summary-json.js';
import { cacheWarnings } from '../metrics/cache-check.js';
import { runSlos } from '../metrics/goodput.js';
import { responseWarnings } from '../metrics/response-checks.js';
import { slowFirstWaveNote } from '../metrics/start-up.js';
import type { Summary } from '../metrics/summary.js';
import { SpillBudget } from '../metrics/value-store.js';
import { writeReport } from '../report/html.js';
import { RunLoadError } from '../report/types.js';
import { requestUrlOf } from '../request/servers.js';
import { clearRunArtifacts, createArtifactDir } from '../run/artifacts.js';
import { usageContext } from '../run/finish.js';
import { parseOptions } from '../util/option-meta.js';
import { concatInputs } from './inputs-concat.js';
import { extraSections, mergedConsole } from './merge-console.js';
import { mergedIdeal } from './merged-ideal.js';
import { type MergeOptions, type MergeOptionsInput, MergeOptionsSchema } from './options.js';
import { RecordFold, type SourceCounts } from './record-fold.js';
import { mergeRecordFiles } from './record-stream.js';
import { readShardFolder, type ShardFolder } from './shard-folder.js';
import { checkShardSet, gapsOf, type IdentifiedShard, type ShardSet, ShardSetError } from './shard-set.js';
import { clockWarnings, mergedStatus, type ShardsSection, shardsSection } from './shards-section.js';

/** What a merge returns to the CLI. */
export interface MergeOutcome {
  summary: Summary;
  /** The merged `run_status`, with the exit code the CLI gives. */
  status: RunStatus;
  /** The console report (also saved as `profile_export_console.txt`), with the report's line. */
  consoleText: string;
  artifactDir: string;
  /** Record lines merged. */
  recordCount: number;
  shards: ShardsSection;
  /** Metric values spilled to disk while summarizing: sorted runs and bytes (0 when all fit). */
  spill: { runs: number; bytes: number };
}

/** The shards read and checked. */
interface Plan {
  options: MergeOptions;
  set: ShardSet;
  /** The set's shards by index, then the runs that failed before writing a shard section. */
  folders: ShardFolder[];
  /** Why the set is not whole; empty when it is. */
  gaps: string[];
  /** The first shard (lowest index): its `input_config` is the merged run's. */
  first: IdentifiedShard;
}

/**
 * Reads and checks every folder; refuses a set with gaps unless `allowPartial`.
 * @throws see {@link mergeShards}.
 */
async function plan(input: MergeOptionsInput): Promise<Plan> {
  const options = parseOptions(MergeOptionsSchema, input, (m, o) => new ConfigError(m, o));
  const read: ShardFolder[] = [];
  for (const dir of options.shardDirs) read.push(await readShardFolder(dir));
  const set = checkShardSet(read);
  const gaps = gapsOf(set);
  if (gaps.length > 0 && !options.allowPartial)
    throw new ShardSetError(
      `merge refused, nothing written: ${gaps.join('; ')} (--allow-partial merges the shards given and marks the result partial)`,
    );
  const out = resolve(options.artifactDir);
  const shardDir = options.shardDirs.find((d) => resolve(d) === out);
  if (shardDir !== undefined)
    throw new ConfigError(
      `--artifact-dir ${options.artifactDir} is shard folder ${shardDir}; merge into a folder of its own`,
      '--artifact-dir',
    );
  const folders = [...set.shards, ...set.unidentified];
  return { options, set, folders, gaps, first: set.shards[0] as IdentifiedShard };
}

/** Epoch ns the load began: the shards' common `--start-at`, else the earliest shard's start time. */
function startEpochNs(p: Plan): bigint {
  const at = p.first.shard.start_at_ms;
  if (at !== null) return BigInt(Math.round(at)) * 1_000_000n;
  return BigInt(Math.min(...p.folders.map((f) => Date.parse(f.summary.start_time)))) * 1_000_000n;
}

/** The fold of a plan: its options from the first shard's `input_config` (checkShardSet made them agree). */
function foldOf(p: Plan, sources: number): RecordFold {
  const c = p.first.summary.input_config;
  return new RecordFold({
    spill: new SpillBudget(p.options.spillAfterValues, p.options.artifactDir),
    slos: runSlos(c.goodput, c.streaming && ENDPOINTS[c.endpointType].streamable).slos ?? [],
    overheadOf: ENDPOINTS[c.endpointType].chatTemplated ? 'chat_template' : 'prompt_joiners',
    // The records' time base is the start itself.
    startNs: 0,
    urls: [...new Set(p.set.shards.flatMap((s) => s.summary.input_config.url))],
    sources,
  });
}

/** Where `file` is written until every record and input is: a failed merge leaves neither file. */
function temporaryOf(file: string): string {
  return `${file}.merging`;
}

/**
 * Folds every record line and writes them to the temporary `profile_export.jsonl` of the output.
 * @returns the fold, the line count and each folder's counts (in `p.folders` order).
 */
async function foldRecords(p: Plan) {
  const withRecords = p.folders.filter((f) => f.recordsFile !== null);
  const fold = foldOf(p, withRecords.length);
  const sources = withRecords.map((f) => ({
    file: f.recordsFile as string,
    streaming: f.summary.input_config.streaming,
  }));
  const ideal =
    sources.length > 1
      ? await mergedIdeal(p.first.summary.input_config, sources, new EpochBase(startEpochNs(p)))
      : null;
  const tokens = ideal !== null && 'tokens' in ideal ? ideal.tokens : undefined;
  const sink = new LineSink(temporaryOf(join(p.options.artifactDir, RECORDS_FILE_NAME)));
  let recordCount = 0;
  try {
    for await (const line of mergeRecordFiles(sources, new EpochBase(startEpochNs(p)))) {
      fold.add(line, tokens);
      await sink.write(`${line.text}\n`);
      recordCount++;
    }
    await sink.close();
  } catch (err) {
    await sink.close().catch(() => undefined);
    fold.summary.release();
    throw err;
  }
  const none: SourceCounts = { requests: 0, errors: 0 };
  const counts = p.folders.map((f) => fold.perSource[withRecords.indexOf(f)] ?? none);
  const idealUnavailable = ideal !== null && 'unavailable' in ideal ? ideal.unavailable : null;
  return { fold, recordCount, counts, idealUnavailable };
}

/** Where the first shard's requests went, and its models (for the hint of a run in which none succeeded). */
function requestTarget(p: Plan): RequestTarget {
  const c = p.first.summary.input_config;
  const url = c.url[0] as string;
  const path = endpointPathFor(ENDPOINTS[c.endpointType], c.streaming, c.endpointPath);
  return {
    requestUrl: requestUrlOf({ url, path: requestPathFor(url, path) }),
    models: c.models,
    servedModels: null,
  };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

/**
 * The shards' `inputs.json` files, in merge order: every folder's; a failed run's only when it
 * wrote one.
 * @throws {RunLoadError} when a shard that recorded requests has none.
 */
async function inputsFiles(p: Plan): Promise<string[]> {
  const files: string[] = [];
  for (const f of p.folders) {
    const file = join(f.dir, INPUTS_FILE_NAME);
    if (await exists(file)) files.push(file);
    else if (f.recordsFile !== null)
      throw new RunLoadError(`${f.dir}: no ${INPUTS_FILE_NAME} beside its ${RECORDS_FILE_NAME}`, file);
  }
  return files;
}

/** What a merge computed: the summary export context, the `shards` section and the line count. */
interface Merged {
  ctx: SummaryExportContext & { runStatus: RunStatus };
  shards: ShardsSection;
  recordCount: number;
  spill: MergeOutcome['spill'];
}

/** The summary of the folded records, its warnings, status and sections. */
function summarizeFold(p: Plan, folded: Awaited<ReturnType<typeof foldRecords>>): Merged {
  const { fold, recordCount, counts } = folded;
  const shards = shardsSection(p.set, p.folders, counts);
  const summary = fold.summary.build();
  // The values are not needed past here (the report reads the merged file): free them and their files.
  fold.summary.release();
  const config = p.first.summary.input_config;
  if (folded.idealUnavailable !== null) unjudgedCache(summary, folded.idealUnavailable);
  summary.warnings.push(
    ...slowStartWarnings(p, fold),
    ...responseWarnings(summary.responses, usageContext(config)),
    ...clockWarnings(shards),
    ...apartWarnings(p),
  );
  const ctx = {
    summary,
    inputConfig: config,
    aiperfInputConfig: aiperfInputConfigOf(config),
    startTime: new Date(Math.min(...p.folders.map((f) => Date.parse(f.summary.start_time)))),
    endTime: new Date(Math.max(...p.folders.map((f) => Date.parse(f.summary.end_time)))),
    wasCancelled: p.folders.some((f) => f.summary.was_cancelled),
    runStatus: mergedStatus(summary, p.gaps, requestTarget(p)),
    extra: extraSections(p.set, fold, shards, summary),
  };
  return { ctx, shards, recordCount, spill: fold.spillUsed() };
}

/**
 * The run's note of a slow first wave (metrics/start-up.ts), judged on the merged `start_up`: a
 * single run gives it from its own, so the merge of its shards gives it too (before the response
 * warnings, where a run puts it). A warm-up in any shard counts as one.
 */
function slowStartWarnings(p: Plan, fold: Awaited<ReturnType<typeof foldRecords>>['fold']): string[] {
  const startUp = fold.startUpSection();
  if (startUp === null) return [];
  const warmedUp = p.folders.some((f) => f.summary.load?.warmup !== undefined);
  const note = slowFirstWaveNote(startUp, warmedUp);
  return note === null ? [] : [note];
}

/**
 * Without a merged ideal prefix cache (merge/merged-ideal.ts), each request's ideal counts only its
 * own shard's earlier requests: the over-the-ideal count is not judged (`over_reported` null, the
 * console says so), the warm-cache warning it would give is dropped, and a warning says why.
 */
function unjudgedCache(summary: Summary, why: string): void {
  if (summary.cacheCheck === null) return;
  const warm = new Set(cacheWarnings(summary.cacheCheck));
  summary.warnings = summary.warnings.filter((w) => !warm.has(w));
  summary.cacheCheck.over_reported = null;
  summary.warnings.push(
    `the cache check is not judged: the ideal prefix cache over all shards could not be computed (${why}); each request's ideal_cached_tokens counts only its own shard's earlier requests, so no over-the-ideal count is given (another shard's blocks would look like a warm cache)`,
  );
}

/**
 * A warning when the shards did not all run at once (no common `--start-at`, and one shard started
 * after another had ended): the merged benchmark window spans them all, so its throughputs are not
 * the load a server saw at any moment.
 */
function apartWarnings(p: Plan): string[] {
  if (p.first.shard.start_at_ms !== null || p.folders.length < 2) return [];
  const windows = p.folders.map((f) => [Date.parse(f.summary.start_time), Date.parse(f.summary.end_time)]);
  const lastStart = Math.max(...windows.map(([start]) => start ?? 0));
  const firstEnd = Math.min(...windows.map(([, end]) => end ?? 0));
  if (lastStart < firstEnd) return [];
  const gapS = ((lastStart - firstEnd) / 1000).toFixed(1);
  return [
    `the shards did not run at the same time (no --start-at; one started ${gapS} s after another ended): the merged benchmark duration spans them all, so its throughputs understate the load of a run with every shard at once; start the shards with one --start-at`,
  ];
}

/**
 * A shard whose records file holds fewer or more lines than its summary's `shard.requests` (a copy
 * cut short, a full disk) is a gap: refused, or with `allowPartial` added to the plan's gaps.
 * @throws {ShardSetError} naming each such shard, without `allowPartial`.
 */
function checkLineCounts(p: Plan, counts: readonly SourceCounts[]): void {
  const short = p.folders.flatMap((f, i) => {
    const lines = counts[i]?.requests ?? 0;
    if (f.shard === null || f.shard.requests === lines) return [];
    return [
      `shard ${f.shard.index} (${f.dir}): ${lines} lines in profile_export.jsonl, its summary says ${f.shard.requests} requests`,
    ];
  });
  if (short.length === 0) return;
  if (!p.options.allowPartial)
    throw new ShardSetError(
      `merge refused, nothing written: ${short.join('; ')} (--allow-partial merges the lines there are and marks the result partial)`,
    );
  p.gaps.push(...short);
}

/**
 * Writes the merged `profile_export.jsonl` and `inputs.json` (both under temporary names until
 * both are whole, so a failed merge leaves neither, and an earlier run's artifacts in the folder are
 * removed only then: a merge refused at a bad line keeps them) and summarizes the records. The metric values
 * are dropped when this returns: the report is built without them in memory.
 */
async function mergeFiles(p: Plan, inputs: readonly string[]): Promise<Merged> {
  const out = p.options.artifactDir;
  const written = [join(out, RECORDS_FILE_NAME), join(out, INPUTS_FILE_NAME)];
  let folded: Awaited<ReturnType<typeof foldRecords>>;
  try {
    folded = await foldRecords(p);
    checkLineCounts(p, folded.counts);
    await concatInputs(inputs, temporaryOf(join(out, INPUTS_FILE_NAME)));
    // Only now, with every line read and both files whole, is an earlier run's output replaced.
    await clearRunArtifacts(out);
  } catch (err) {
    for (const file of written) await rm(temporaryOf(file), { force: true });
    throw err;
  }
  for (const file of written) await rename(temporaryOf(file), file);
  return summarizeFold(p, folded);
}

/**
 * Merges the shards named by `input` into `input.artifactDir`: `profile_export.jsonl` (every
 * shard's lines, interleaved by `request_end_ns`), `profile_export_aiperf.json`/`.csv` (with a
 * `shards` section), `profile_export_console.txt`, `inputs.json` (the shards' entries concatenated
 * in shard order) and `report.html`. An earlier run's artifacts in that folder are replaced once
 * every shard's lines were read (a refused merge leaves them, and removes a folder it made).
 * @throws {ConfigError} for bad options or an artifact folder that is a shard's; {RunLoadError}
 *   naming file, line and field for a folder that is not a tokenload run or a malformed line;
 *   {ShardSetError} when the folders are not shards of one run, or (without `allowPartial`) a
 *   shard is missing or did not complete — both before anything is written.
 */
export async function mergeShards(input: MergeOptionsInput): Promise<MergeOutcome> {
  const p = await plan(input);
  const inputs = await inputsFiles(p);
  const out = p.options.artifactDir;
  const existed = await exists(out);
  await createArtifactDir(out);
  let merged: Merged;
  try {
    merged = await mergeFiles(p, inputs);
  } catch (err) {
    // A folder this merge made is not left behind empty; an earlier run's files were not touched.
    if (!existed) await rmdir(out).catch(() => undefined);
    throw err;
  }
  const { ctx, shards, recordCount, spill } = merged;
  const files = await writeSummaryFiles(out, ctx);
  const text = mergedConsole({ ...ctx, out, files, commandLine: p.options.commandLine, recordCount, shards });
  await writeFile(join(out, EXPORTERS.console.fileName), text);
  const report = await writeReport(out);
  const reportLine = `HTML Report: ${report.path} (${(report.bytes / 1e6).toFixed(2)} MB, built in ${Math.round(report.ms)} ms)`;
  const { summary, runStatus: status } = ctx;
  return {
    summary,
    status,
    consoleText: `${text}${reportLine}\n`,
    artifactDir: out,
    recordCount,
    shards,
    spill,
  };
}
