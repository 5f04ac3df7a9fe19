/**
 * A run's inputs, read before it claims its folder: the tokenizer and chat template, the dataset
 * (loaded whole, generated, or a trace stream with its first row read), a shard's part of it, the
 * prompt synthesizer, and what the run says about them (warnings, the prompt length check).
 */
import { readFile } from 'node:fs/promises';
import { synthesisOf } from '../config/fields-synthesis.js';
import type { RunInput, RunPlan } from '../config/plan.js';
import { checkDeclaredFormat } from '../dataset/format-check.js';
import { fillDatasetOsl, fillStreamOsl } from '../dataset/osl-fallback.js';
import { type PROMPT_TOKENS_WARN, PromptLengthCheck } from '../dataset/prompt-length.js';
import { DATASET_LOADERS } from '../dataset/registry.js';
import { type SessionSampleSpec, sampleDataset, sampleTraceStream } from '../dataset/session-sample.js';
import { generateSyntheticDataset, SYNTHETIC_SOURCE } from '../dataset/synthetic.js';
import { headTimeUnitWarning } from '../dataset/time-unit-check.js';
import {
  type Dataset,
  DatasetError,
  type LoadOptions,
  type SkipCounts,
  type StreamedTurn,
  type TraceStream,
  type Turn,
} from '../dataset/types.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TokenizerSource } from '../prompt/tokenizer-source.js';
import { type ShardInputs, shardInputs } from '../shard/shard-run.js';
import { earliestFirstTurnMs } from '../timing/fixed-schedule.js';
import type { FixedScheduleReport } from '../timing/types.js';
import type { RunEnv } from '../util/run-env.js';
import type { RunContext } from './context.js';
import { loadRunTokenizer } from './tokenizer-setup.js';
import { applyDeveloperRole, runTraceCheck, type TraceCheckNotes } from './trace-check-run.js';
/**
 * What the run says about its input besides the summary's own warnings: warnings found at its start
 * (logged then), and the prompt length check, which a streamed trace goes on feeding while it runs.
 */
export interface InputNotes {
  warnings: string[];
  lengths: PromptLengthCheck;
  /** The trace check's report and `--developer-role-as-system`'s rewrites (run/trace-check-run.ts). */
  traceCheck?: TraceCheckNotes;
}

/** What {@link prepareInputs} gives the run. */
export type RunInputs = Pick<
  RunContext,
  | 'tokenizer'
  | 'tokenizerSource'
  | 'templateCounter'
  | 'dataset'
  | 'stream'
  | 'synthesizer'
  | 'firstRow'
  | 'systemPrompt'
> &
  Pick<ShardInputs, 'autoZeroMs'> & { notes: InputNotes };

/**
 * Tokenizer (and chat template), dataset (or trace stream) and prompt synthesizer of a run.
 * @throws {TokenizerLoadError} / {DatasetError} / {ScheduleError} / {ConfigError} for a tokenizer
 *   that does not load, a bad input, a trace of another format than `--custom-dataset-type`
 *   (dataset/format-check.ts), a replayed trace without timestamps, or a prompt over the
 *   length a run refuses.
 */
export async function prepareInputs(
  config: RunPlan,
  env: RunEnv,
  source: TokenizerSource,
): Promise<RunInputs> {
  if (config.input.kind === 'file') checkDeclaredFormat(config.input.file, config.input.datasetType);
  const systemPrompt = await readSystemPrompt(config);
  const { tokenizer, templateCounter } = loadRunTokenizer(config, env, source);
  const opened = openTraceStream(config);
  const sample = sessionSampleOf(config);
  const read =
    opened === null ? null : await firstRowRead(sample === null ? opened : sampleTraceStream(opened, sample));
  const openedWhole = read?.stream ?? null;
  const loaded = openedWhole === null ? await loadedDataset(config, sample) : streamedDataset(openedWhole);
  const load = config.input.kind === 'file' ? loadOptions(config, config.input) : {};
  const check = await runTraceCheck(config, env, openedWhole === null ? loaded : null, load, tokenizer);
  const { stream: whole, rewrites } = applyDeveloperRole(config, loaded, openedWhole);
  const sharded = shardInputs(config, loaded, whole);
  const { dataset, autoZeroMs } = sharded;
  if (systemPrompt !== null) refuseVerbatimTurns(dataset.conversations.flatMap((c) => c.turns));
  // A trace replayed whole needs a timestamp on each first turn: checked before the folder is claimed.
  if (config.load.kind === 'fixed_schedule' && sharded.stream === null)
    earliestFirstTurnMs(dataset.conversations);
  if (systemPrompt !== null && sharded.stream !== null) {
    if (read?.first != null) refuseVerbatimTurns([read.first.turn]);
    sharded.stream = { ...sharded.stream, turns: refusingVerbatim(sharded.stream.turns) };
  }
  const { stream, notes } = inputNotes(config, env, sharded, read?.first ?? null);
  notes.warnings.push(...check.warnings);
  notes.traceCheck = { report: check.report, developerRewrites: rewrites };
  env.log.info(
    stream === null
      ? describeDataset(dataset)
      : `streaming ${stream.file}: rows are read as the schedule reaches them`,
  );
  const synthesizer = PromptSynthesizer.create(tokenizer, config.randomSeed);
  const first = read?.first ?? null;
  return {
    tokenizer,
    tokenizerSource: source,
    templateCounter,
    dataset,
    stream,
    synthesizer,
    firstRow: first,
    systemPrompt,
    notes,
    ...(autoZeroMs === undefined ? {} : { autoZeroMs }),
  };
}

/**
 * The run's system prompt: `--system-prompt` as given, or the text of `--system-prompt-file`, read
 * here once, before anything is sent; null without either.
 * @throws {DatasetError} naming the path of a file that cannot be read, or that is empty.
 */
async function readSystemPrompt(config: RunPlan): Promise<string | null> {
  if (config.systemPrompt !== undefined) return config.systemPrompt;
  const file = config.systemPromptFile;
  if (file === undefined) return null;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const why = err instanceof Error && 'code' in err ? String(err.code) : String(err);
    throw new DatasetError(`--system-prompt-file ${file}: cannot read it (${why})`, file);
  }
  if (text.length === 0) throw new DatasetError(`--system-prompt-file ${file}: the file is empty`, file);
  return text;
}

/**
 * A verbatim body (a Mooncake `payload` row) is sent as written, so the system prompt could not be
 * put on it: refused, as AIPerf refuses `--system-prompt` with such rows.
 * @throws {DatasetError} naming the first such turn's file and line.
 */
function refuseVerbatimTurns(turns: Iterable<Turn>): void {
  for (const turn of turns) {
    if (turn.prompt.kind !== 'payload') continue;
    const { file, line } = turn.source;
    throw new DatasetError(
      `${file}:${line}: a "payload" row is sent as written, so --system-prompt / --system-prompt-file cannot be added to it; write the system message into the payloads, or use text_input or messages rows`,
      file,
      line,
      'payload',
    );
  }
}

/** The rows of a streamed trace, {@link refuseVerbatimTurns} applied to each as it is read. */
async function* refusingVerbatim(turns: AsyncIterable<StreamedTurn>): AsyncGenerator<StreamedTurn> {
  for await (const t of turns) {
    refuseVerbatimTurns([t.turn]);
    yield t;
  }
}

/**
 * The warnings of a run's input, logged now: `--streaming` on an endpoint that cannot stream, a
 * trace whose timestamps look like another unit than its format's (dataset/time-unit-check.ts), and
 * prompts over {@link PROMPT_TOKENS_WARN} tokens (dataset/prompt-length.ts: a dataset loaded whole
 * is checked now; a streamed trace's rows as they are read, its first one now).
 * @throws {DatasetError} / {ConfigError} for a prompt over the length a run refuses.
 */
function inputNotes(
  config: RunPlan,
  env: RunEnv,
  input: ShardInputs,
  first: StreamedTurn | null,
): { stream: TraceStream | null; notes: InputNotes } {
  const warnings: string[] = [];
  if (config.streaming && !ENDPOINTS[config.endpointType].streamable)
    warnings.push(
      `--streaming is ignored: --endpoint-type ${config.endpointType} answers with one JSON body, never a stream (AIPerf ignores it too); streaming-only metrics (time to first token, inter-token latency) are not measured`,
    );
  if (config.input.kind === 'file') {
    const unit = headTimeUnitWarning(
      config.input.file,
      config.input.datasetType,
      config.synthesisSpeedupRatio,
    );
    if (unit !== null) warnings.push(unit);
  }
  const streamed = input.stream;
  const lengths = new PromptLengthCheck(
    {
      flag:
        config.input.kind === 'synthetic' && config.input.options.seqDist !== undefined
          ? '--seq-dist'
          : '--isl',
      datasetType: config.input.kind === 'file' ? config.input.datasetType : undefined,
      scaled: (config.synthesisPromptLenMultiplier ?? 1) !== 1,
    },
    streamed === null ? undefined : (w) => env.log.warn(w),
  );
  if (streamed === null) lengths.checkAll(input.dataset);
  else if (first !== null) lengths.refuse(first.turn);
  const long = lengths.warning();
  if (long !== null) warnings.push(long);
  for (const w of warnings) env.log.warn(w);
  const stream = streamed === null ? null : { ...streamed, turns: lengths.watch(streamed.turns) };
  return { stream, notes: { warnings: warnings.filter((w) => w !== long), lengths } };
}

/**
 * The trace stream of a run, or null when the dataset is loaded whole: streaming needs
 * `--trace-streaming` (default), a fixed schedule, a loader that can stream, no `--concurrency` cap
 * (a session slot is held until a session's last turn, which a stream cannot know) and no warmup
 * (which samples conversations from a loaded dataset).
 * @throws {DatasetError} for bad load options.
 */
function openTraceStream(config: RunPlan): TraceStream | null {
  const { input, load } = config;
  if (!config.traceStreaming || load.kind !== 'fixed_schedule' || input.kind !== 'file') return null;
  if (load.concurrency !== undefined || config.warmup !== null) return null;
  const loader = DATASET_LOADERS[input.datasetType];
  if (loader.stream === undefined) return null;
  const opened = loader.stream(input.file, loadOptions(config, input));
  const stream =
    input.osl === undefined
      ? opened
      : { ...opened, turns: fillStreamOsl(opened.turns, input.osl, config.randomSeed) };
  const mode = config.contextModeOverride;
  return mode === undefined ? stream : { ...stream, turns: withContextMode(stream.turns, mode) };
}

/**
 * Reads the first row of a stream before the run starts, so a missing file, a folder, an empty file
 * or a bad first row fails before anything is started or written, as with a whole-file load.
 * @throws {DatasetError} for those.
 */
async function firstRowRead(
  stream: TraceStream,
): Promise<{ stream: TraceStream; first: StreamedTurn | null }> {
  const rows = stream.turns[Symbol.asyncIterator]();
  const first = await rows.next();
  async function* all(): AsyncGenerator<StreamedTurn> {
    if (first.done === true) return;
    yield first.value;
    for (let next = await rows.next(); next.done !== true; next = await rows.next()) yield next.value;
  }
  return { stream: { ...stream, turns: all() }, first: first.done === true ? null : first.value };
}

async function* withContextMode(
  turns: AsyncIterable<StreamedTurn>,
  mode: NonNullable<RunPlan['contextModeOverride']>,
): AsyncGenerator<StreamedTurn> {
  for await (const t of turns) yield { ...t, contextMode: mode };
}

function streamedDataset(stream: TraceStream): Dataset {
  return {
    conversations: [],
    turnCount: 0,
    blockSize: stream.blockSize,
    skipped: stream.skipped,
    file: stream.file,
  };
}

/** The console line of a streamed replay that ended: rows read, sessions, requests, rows dropped. */
export function describeStream(stream: TraceStream, load: FixedScheduleReport): string {
  const { skipped } = stream;
  const parts = [
    `${stream.file}: rows read ${load.replay.rowsRead}, sessions ${load.replay.sessions}${treesNote(load)}, requests sent ${load.issued}`,
  ];
  const filtered = skipped.beforeStartOffset + skipped.afterEndOffset;
  if (filtered > 0) parts.push(`rows outside the offset window ${filtered}`);
  if (skipped.unreadAfterLine !== undefined)
    parts.push(`reading stopped at line ${skipped.unreadAfterLine}, the first row after the end offset`);
  if (skipped.badLines > 0) parts.push(`malformed lines skipped ${skipped.badLines}`);
  parts.push(...synthesisParts(skipped));
  return parts.join('; ');
}

/** ` (a Bailian tree's branches counted as sessions of their own)` when the replay had branches. */
function treesNote(load: FixedScheduleReport): string {
  return load.replay.branchSessions > 0
    ? ` (${load.replay.branchSessions} of them branches of a Bailian tree, each counted as a session)`
    : '';
}

/**
 * The dataset of a run loaded whole (or generated), as the run loads it before sharding: the same
 * sessions, ids and trace synthesis (`tokenload merge` loads a run's input again with it).
 * @throws {DatasetError} for a bad input.
 */
export async function loadRunDataset(config: RunPlan): Promise<Dataset> {
  const { input } = config;
  if (input.kind === 'synthetic') {
    return generateSyntheticDataset({
      ...input.options,
      randomSeed: config.randomSeed,
      blockSize: config.islBlockSize,
    });
  }
  const dataset = await DATASET_LOADERS[input.datasetType].load(input.file, loadOptions(config, input));
  return input.osl === undefined ? dataset : fillDatasetOsl(dataset, input.osl, config.randomSeed);
}

function loadOptions(config: RunPlan, input: Extract<RunInput, { kind: 'file' }>): LoadOptions {
  const synthesis = synthesisOf(config);
  return {
    ...input.window,
    speedupRatio: config.synthesisSpeedupRatio,
    ...(config.islBlockSize === undefined ? {} : { blockSize: config.islBlockSize }),
    skipBadLines: config.skipBadLines,
    ...(synthesis === undefined ? {} : { synthesis }),
    randomSeed: config.randomSeed,
    ...(config.stop.sessionCount === undefined ? {} : { poolDraws: config.stop.sessionCount }),
    extraInputKeys: Object.keys(config.extraInputs),
    ...(config.contextModeOverride === undefined ? {} : { contextModeOverride: config.contextModeOverride }),
    // Bailian trees need a fixed schedule: other strategies send a session's turns one after the other.
    sessionTrees: config.load.kind === 'fixed_schedule' && !config.bailianLinearSessions,
  };
}

/** What trace synthesis and the session sample did to the rows read (console): rows dropped, outputs capped, prompts unscaled, sessions kept. */
function synthesisParts(skipped: SkipCounts): string[] {
  const parts: string[] = [];
  const sample = skipped.sessionSample;
  if (sample !== undefined)
    parts.push(
      `--trace-session-sample-ratio ${sample.ratio} (seed ${sample.seed}) kept ${sample.sessionsKept} of ${sample.sessionsRead} sessions, ${sample.rowsKept} of ${sample.rowsRead} rows`,
    );
  if (skipped.overMaxIsl !== undefined)
    parts.push(`rows over --synthesis-max-isl dropped ${skipped.overMaxIsl}`);
  if (skipped.maxOslCapped !== undefined)
    parts.push(`output lengths capped at --synthesis-max-osl ${skipped.maxOslCapped}`);
  if ((skipped.promptUnscaled ?? 0) > 0)
    parts.push(`rows without input_length left unscaled ${skipped.promptUnscaled}`);
  return parts;
}

/** The run's whole-session sample (`--trace-session-sample-ratio` and the resolved seed); null without it. */
function sessionSampleOf(config: RunPlan): SessionSampleSpec | null {
  const ratio = config.traceSessionSampleRatio;
  return ratio === undefined ? null : { ratio, seed: config.randomSeed };
}

/** The dataset loaded (or generated), its context mode overridden, then its session sample taken. */
async function loadedDataset(config: RunPlan, sample: SessionSampleSpec | null): Promise<Dataset> {
  const dataset = applyContextOverride(await loadRunDataset(config), config);
  return sample === null ? dataset : sampleDataset(dataset, sample);
}

function applyContextOverride(dataset: Dataset, config: RunPlan): Dataset {
  const mode = config.contextModeOverride;
  if (mode === undefined) return dataset;
  for (const c of dataset.conversations) c.contextMode = mode;
  return dataset;
}

function describeDataset(d: Dataset): string {
  const skipped = d.skipped.beforeStartOffset + d.skipped.afterEndOffset;
  const parts =
    d.file === SYNTHETIC_SOURCE
      ? [
          `synthetic dataset: ${d.conversations.length} conversations (${d.turnCount} turns), sampled until the stop condition`,
        ]
      : [`${d.turnCount} requests in ${d.conversations.length} sessions from ${d.file}`];
  if (skipped > 0) parts.push(`${skipped} rows outside the offset window`);
  if (d.skipped.badLines > 0) parts.push(`${d.skipped.badLines} bad lines skipped`);
  parts.push(...synthesisParts(d.skipped));
  return parts.join('; ');
}
