/**
 * One `tokenload profile` run, end to end: dataset → prompts → timing → client → records →
 * metrics → exports. An optional warmup phase runs first and is summarized separately. Records
 * stream to `profile_export.jsonl` as they complete; an interrupt (the `stopSignal`) stops issuing,
 * waits a bounded grace period for in-flight requests, cancels what is left (recorded as
 * cancelled), and still writes every export.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient } from '../client/worker-factory.js';
import type { ProfileConfigInput } from '../config/fields.js';
import { synthesisOf } from '../config/fields-synthesis.js';
import type { ProfileConfig } from '../config/resolve.js';
import { profileConfig } from '../config/schema.js';
import { IdealPrefixCache } from '../dataset/prefix-chain.js';
import { type PROMPT_TOKENS_WARN, PromptLengthCheck } from '../dataset/prompt-length.js';
import { getDatasetLoader } from '../dataset/registry.js';
import { generateSyntheticDataset, SYNTHETIC_SOURCE } from '../dataset/synthetic.js';
import type { Dataset, LoadOptions, SkipCounts, StreamedTurn, TraceStream } from '../dataset/types.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import { INPUTS_FILE_NAME, RECORDS_FILE_NAME } from '../export/index.js';
import { measureClientFloor } from '../health/client-floor.js';
import type { ProbeAnswer } from '../preflight/preflight.js';
import { urlPathWarnings } from '../preflight/url-path-check.js';
import { waitForServer } from '../preflight/wait-for-model.js';
import { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TokenizerSource } from '../prompt/tokenizer-source.js';
import { joinedPathNote, requestUrlOf, serverTargets } from '../request/servers.js';
import { SERVER_METRICS_JSONL_FILE_NAME } from '../server-metrics/exports.js';
import type { ClockMeasurement } from '../shard/clock-offset.js';
import { type ShardInputs, shardDescription, shardInputs, shareConfig } from '../shard/shard-run.js';
import { checkStartAt, measureRunClock, shardReport } from '../shard/start-at.js';
import { CLI_SIMULATOR_WARMUP_MS } from '../simulator/options.js';
import { type SpawnedSimulator, spawnSimulator } from '../simulator/spawn.js';
import { earliestFirstTurnMs } from '../timing/fixed-schedule.js';
import { RealClock } from '../timing/real-clock.js';
import type { FixedScheduleReport } from '../timing/types.js';
import type { RunEnv } from '../util/run-env.js';
import { claimArtifactDir, createArtifactDir, holdsEarlierRun, writeFailedSummary } from './artifacts.js';
import { warmUpClient } from './client-warmup.js';
import type { RunContext } from './context.js';
import { finishRun, type RunOutcome } from './finish.js';
import { type PhaseResult, runPhase } from './phase.js';
import { beginRunScraper, spawnRunScraper } from './server-metrics-run.js';
import { buildStrategy, profilingLimits, warmupLimits } from './strategy-factory.js';
import { loadRunTokenizer, resolveRunTokenizer, tokenizerFacts } from './tokenizer-setup.js';

/**
 * Validates `input` ({@link profileConfig}), runs a profile and writes all artifacts. The run first
 * checks what it can without touching `--artifact-dir` beyond creating it: the tokenizer, the input
 * (loaded, or its first row read), the schedule, the simulator and the servers' answer. Then it
 * owns the folder: it removes an earlier run's artifacts there, saying so (run/artifacts.ts), and
 * any error after that leaves a summary whose `run_status` says the run failed and why. An error
 * before leaves an earlier run's artifacts as they are (a folder without any gets the failed
 * summary). A run in which no request succeeded returns normally, its `status` saying so.
 * @throws {ConfigError} for a bad option; {DatasetError} / {TokenizerLoadError} / {ScheduleError} /
 *   {ServerUnreachableError} / {OutputError} for bad input, an unreachable server or an artifact
 *   folder that cannot be created or written, before anything is measured; {InterruptedError} when the stop
 *   signal aborted a tokenizer download (the summary then says `interrupted`). All are
 *   {@link TokenloadError}s.
 */
export async function runProfile(input: ProfileConfigInput, env: RunEnv): Promise<RunOutcome> {
  const asked = profileConfig(input);
  checkStartAt(asked, Date.now());
  // A shard runs its share of the load (shard/shard-run.ts); the summary keeps the values asked.
  const config = shareConfig(asked);
  const startTime = new Date();
  let starting: Promise<SpawnedSimulator> | null = null;
  let simulator: SpawnedSimulator | null = null;
  let warming: Promise<void> | null = null;
  let ownsFolder = false;
  // Its thread starts now, so that its start-up overlaps the run's; it scrapes once the target answers.
  const scraper = spawnRunScraper(config, env);
  try {
    await createArtifactDir(config.artifactDir);
    const source = await resolveRunTokenizer(config, env);
    // The simulator child boots (and loads its tokenizer) on another core while this process loads its own.
    starting = config.simulator ? startSimulator(config, source.path) : null;
    const { autoZeroMs, notes, ...inputs } = await prepareInputs(config, env, source);
    const adapter: EndpointAdapter = ENDPOINTS[config.endpointType];
    const clock = new RealClock({ precision: config.timingPrecision });
    const shared = {
      config,
      env,
      adapter,
      clock,
      openClient: createClient,
      measureFloor: measureClientFloor,
      ...inputs,
    };
    // The client warms up against its own in-process simulator while the simulator child (if any)
    // finishes its own warm-up, so neither adds to the other's wait.
    warming = warmUpClientLogged({ ...shared, targets: config.url });
    simulator = await starting;
    await warming;
    const targets = simulator === null ? config.url : [simulator.url];
    if (simulator !== null) env.log.info(`simulator started at ${simulator.url} (pid ${simulator.pid})`);
    const probes = await waitForServer(config, targets, env);
    for (const [i, server] of serverTargets({ config, adapter, targets }).entries()) {
      const probe = probes[i];
      if (probe === undefined) continue;
      for (const w of urlPathWarnings({ target: server.url, adapter, requestPath: server.path, probe })) {
        env.log.warn(w);
      }
    }
    // From here on the folder holds this run's artifacts only, and a failure leaves a summary saying so.
    ownsFolder = await claimFolder(config, env);
    const clockOffset = await measureRunClock(config, targets, clock, env);
    const serverMetrics = env.stopSignal.aborted ? null : await beginRunScraper(scraper, config, targets);
    return await runPhases(
      { ...shared, targets, serverMetrics },
      { asked, autoZeroMs, clockOffset, served: servedModels(probes), notes },
    );
  } catch (err) {
    // Best effort: the error itself is what the caller must see, not a failure to record it.
    if (ownsFolder || !(await keepsEarlierRun(config, env)))
      await writeFailedSummary(asked, startTime, err).catch(() => undefined);
    throw err;
  } finally {
    await scraper?.close();
    await warming?.catch(() => undefined);
    simulator ??= (await starting?.catch(() => null)) ?? null;
    await simulator?.close();
  }
}

/** Claims the artifact folder (and first a sweep's, `env.beforeClaim`); true once it is the run's. */
async function claimFolder(config: ProfileConfig, env: RunEnv): Promise<true> {
  await env.beforeClaim?.();
  await claimArtifactDir(config.artifactDir, env.log);
  return true;
}

/** A run that failed before it claimed its folder: whether an earlier run's artifacts are there (and kept). */
async function keepsEarlierRun(config: ProfileConfig, env: RunEnv): Promise<boolean> {
  if (!(await holdsEarlierRun(config.artifactDir))) return false;
  env.log.info(
    `${config.artifactDir}: the earlier run's artifacts are kept (this run stopped before touching them)`,
  );
  return true;
}

/** Runs `--client-warmup-ms` (when > 0 and not interrupted) and logs what it did. */
async function warmUpClientLogged(ctx: RunContext): Promise<void> {
  if (ctx.config.clientWarmupMs <= 0 || ctx.env.stopSignal.aborted) return;
  const w = await warmUpClient(ctx, ctx.firstRow ?? null);
  ctx.env.log.info(
    `client warm-up: ${w.requests} requests (${w.errors} failed) in ${Math.round(w.durationMs)} ms against an in-process simulator; nothing was sent to the target`,
  );
}

function startSimulator(config: ProfileConfig, tokenizerPath: string): Promise<SpawnedSimulator> {
  const starting = spawnSimulator({
    tokenizer: tokenizerPath,
    models: config.models,
    // It warms up while this process loads its tokenizer, so the warm-up costs no wall time.
    warmupMs: CLI_SIMULATOR_WARMUP_MS,
    ...(config.simulatorOptions ?? {}),
  });
  // Awaited later; until then a failed start must not count as an unhandled rejection.
  starting.catch(() => undefined);
  return starting;
}

/**
 * What the run says about its input besides the summary's own warnings: warnings found at its start
 * (logged then), and the prompt length check, which a streamed trace goes on feeding while it runs.
 */
interface InputNotes {
  warnings: string[];
  lengths: PromptLengthCheck;
}

/** Tokenizer (and chat template), dataset (or trace stream) and prompt synthesizer of a run. */
async function prepareInputs(
  config: ProfileConfig,
  env: RunEnv,
  source: TokenizerSource,
): Promise<
  Pick<
    RunContext,
    'tokenizer' | 'tokenizerSource' | 'templateCounter' | 'dataset' | 'stream' | 'synthesizer' | 'firstRow'
  > &
    Pick<ShardInputs, 'autoZeroMs'> & { notes: InputNotes }
> {
  const { tokenizer, templateCounter } = loadRunTokenizer(config, env, source);
  const opened = openTraceStream(config);
  const read = opened === null ? null : await firstRowRead(opened);
  const whole = read?.stream ?? null;
  const sharded = shardInputs(
    config,
    whole === null ? applyContextOverride(await loadDataset(config), config) : streamedDataset(whole),
    whole,
  );
  const { dataset, autoZeroMs } = sharded;
  // A trace replayed whole needs a timestamp on each first turn: checked before the folder is claimed.
  if (config.fixedSchedule && sharded.stream === null) earliestFirstTurnMs(dataset.conversations);
  const { stream, notes } = inputNotes(config, env, sharded, read?.first ?? null);
  const shardLine = shardDescription(config);
  if (shardLine !== null) env.log.info(shardLine);
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
    notes,
    ...(autoZeroMs === undefined ? {} : { autoZeroMs }),
  };
}

/**
 * The warnings of a run's input, logged now: `--streaming` on an endpoint that cannot stream, and
 * prompts over {@link PROMPT_TOKENS_WARN} tokens (dataset/prompt-length.ts: a dataset loaded whole
 * is checked now; a streamed trace's rows as they are read, its first one now).
 * @throws {DatasetError} / {ConfigError} for a prompt over the length a run refuses.
 */
function inputNotes(
  config: ProfileConfig,
  env: RunEnv,
  input: ShardInputs,
  first: StreamedTurn | null,
): { stream: TraceStream | null; notes: InputNotes } {
  const warnings: string[] = [];
  if (config.streaming && !ENDPOINTS[config.endpointType].streamable)
    warnings.push(
      `--streaming is ignored: --endpoint-type ${config.endpointType} answers with one JSON body, never a stream (AIPerf ignores it too); streaming-only metrics (time to first token, inter-token latency) are not measured`,
    );
  const streamed = input.stream;
  const lengths = new PromptLengthCheck(
    {
      flag: config.synthetic?.seqDist === undefined ? '--isl' : '--seq-dist',
      datasetType: config.customDatasetType,
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

function nonNull<T>(value: T | null): T[] {
  return value === null ? [] : [value];
}

/** Every model the servers' `/v1/models` lists name (once each); null when none gave a list. */
function servedModels(probes: readonly ProbeAnswer[]): string[] | null {
  const lists = probes.map((p) => p.served).filter((l) => l !== null);
  return lists.length === 0 ? null : [...new Set(lists.flat())];
}

/**
 * What the run knows beyond the phases' context: the configuration asked, a shard's time zero and
 * clock offset, and the models the servers list (the reason of a run where none was served names them).
 */
interface RunFacts extends Pick<ShardInputs, 'autoZeroMs'> {
  asked: ProfileConfig;
  clockOffset: ClockMeasurement | null;
  served: string[] | null;
  notes: InputNotes;
}

async function runPhases(runCtx: RunContext, facts: RunFacts): Promise<RunOutcome> {
  // One ideal prefix cache per server for the run: warmup requests reach the servers' caches too.
  const ctx: RunContext = { ...runCtx, idealCaches: runCtx.targets.map(() => new IdealPrefixCache()) };
  const { config, dataset } = ctx;
  logServers(ctx);
  let warmup: PhaseResult | null = null;
  const warm = warmupLimits(config);
  if (warm !== null) {
    ctx.env.log.info('warmup phase');
    warmup = await runPhase(ctx, 'warmup', buildStrategy(config, dataset, warm, 'warmup'), warm);
  }
  const limits = profilingLimits(config, dataset);
  const strategy = buildStrategy(config, dataset, limits, 'profiling', {
    ...(ctx.stream === null ? {} : { feed: ctx.stream.turns }),
    ...(facts.autoZeroMs === undefined ? {} : { autoZeroMs: facts.autoZeroMs }),
  });
  ctx.env.log.info(`profiling: ${strategy.describe()}`);
  // Run even when Ctrl-C came during start-up: the strategy sends nothing on a stopped signal, and the
  // phase still writes its (empty) records and inputs files, so every export and the report exist.
  const shortBefore = ctx.templateCounter?.shorterThanTemplate ?? 0;
  await ctx.serverMetrics?.mark();
  const profiling = await runPhase(ctx, 'profiling', strategy, limits);
  const serverMetrics = (await ctx.serverMetrics?.stop()) ?? null;
  const load = profiling.load;
  if (load.kind === 'fixed_schedule') {
    // A trace that fails before anything was sent (its first row) is an input error, exactly as with a
    // whole-file load; a later bad row only ends reading (the rows before it are sent).
    if (load.replay.feedError !== null && load.issued === 0) {
      // Nothing was sent: leave no partial exports behind, only the failed summary (as a whole-file load).
      await removePhaseFiles(config.artifactDir);
      throw load.replay.feedError;
    }
    if (ctx.stream !== null) ctx.env.log.info(describeStream(ctx.stream, load));
  }
  const inputSkipped = config.inputFile === undefined ? null : (ctx.stream?.skipped ?? dataset.skipped);
  const requestUrl = serverTargets(ctx).map(requestUrlOf).join(', ');
  return finishRun({
    config,
    askedConfig: facts.asked,
    shard: shardReport(config, profiling, facts.clockOffset),
    profiling,
    warmup,
    strategy,
    synthesizer: ctx.synthesizer,
    inputSkipped,
    requestUrl,
    ...tokenizerFacts(ctx, shortBefore),
    serverMetrics,
    servedModels: facts.served,
    inputWarnings: [...facts.notes.warnings, ...nonNull(facts.notes.lengths.warning())],
  });
}

/**
 * Says where requests go: the servers of a run with several, and any server whose `--url` path
 * already holds part of the endpoint path (`/v1`, or the whole path), so it was not doubled.
 */
function logServers(ctx: RunContext): void {
  const servers = serverTargets(ctx);
  if (servers.length > 1)
    ctx.env.log.info(
      `${servers.length} servers: ${servers.map((s) => s.url).join(', ')}; sessions round-robin, each session on one server`,
    );
  for (const server of servers) {
    const note = joinedPathNote(ctx, server);
    if (note !== null) ctx.env.log.info(note);
  }
}

/**
 * The trace stream of a run, or null when the dataset is loaded whole: streaming needs
 * `--trace-streaming` (default), a fixed schedule, a loader that can stream, no `--concurrency` cap
 * (a session slot is held until a session's last turn, which a stream cannot know) and no warmup
 * (which samples conversations from a loaded dataset).
 * @throws {DatasetError} for bad load options.
 */
export function openTraceStream(config: ProfileConfig): TraceStream | null {
  if (!config.traceStreaming || !config.fixedSchedule || config.inputFile === undefined) return null;
  if (config.concurrency !== undefined || warmupLimits(config) !== null) return null;
  const loader = getDatasetLoader(config.customDatasetType ?? '');
  if (loader.stream === undefined) return null;
  const stream = loader.stream(config.inputFile, loadOptions(config));
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

async function removePhaseFiles(artifactDir: string): Promise<void> {
  for (const name of [RECORDS_FILE_NAME, INPUTS_FILE_NAME, SERVER_METRICS_JSONL_FILE_NAME])
    await rm(join(artifactDir, name), { force: true });
}

async function* withContextMode(
  turns: AsyncIterable<StreamedTurn>,
  mode: NonNullable<ProfileConfig['contextModeOverride']>,
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

function describeStream(stream: TraceStream, load: FixedScheduleReport): string {
  const { skipped } = stream;
  const parts = [
    `${stream.file}: rows read ${load.replay.rowsRead}, sessions ${load.replay.sessions}, requests sent ${load.issued}`,
  ];
  const filtered = skipped.beforeStartOffset + skipped.afterEndOffset;
  if (filtered > 0) parts.push(`rows outside the offset window ${filtered}`);
  if (skipped.unreadAfterLine !== undefined)
    parts.push(`reading stopped at line ${skipped.unreadAfterLine}, the first row after the end offset`);
  if (skipped.badLines > 0) parts.push(`malformed lines skipped ${skipped.badLines}`);
  parts.push(...synthesisParts(skipped));
  return parts.join('; ');
}

async function loadDataset(config: ProfileConfig): Promise<Dataset> {
  if (config.inputFile === undefined) {
    return generateSyntheticDataset({
      ...config.synthetic,
      randomSeed: config.randomSeed,
      blockSize: config.islBlockSize,
    });
  }
  const loader = getDatasetLoader(config.customDatasetType ?? '');
  return loader.load(config.inputFile, loadOptions(config));
}

function loadOptions(config: ProfileConfig): LoadOptions {
  const synthesis = synthesisOf(config);
  return {
    ...(config.fixedScheduleStartOffsetMs === undefined
      ? {}
      : { startOffsetMs: config.fixedScheduleStartOffsetMs }),
    ...(config.fixedScheduleEndOffsetMs === undefined
      ? {}
      : { endOffsetMs: config.fixedScheduleEndOffsetMs }),
    speedupRatio: config.synthesisSpeedupRatio,
    ...(config.islBlockSize === undefined ? {} : { blockSize: config.islBlockSize }),
    skipBadLines: config.skipBadLines,
    ...(synthesis === undefined ? {} : { synthesis }),
  };
}

/** What trace synthesis did to the rows read (console): rows dropped, outputs capped, prompts unscaled. */
function synthesisParts(skipped: SkipCounts): string[] {
  const parts: string[] = [];
  if (skipped.overMaxIsl !== undefined)
    parts.push(`rows over --synthesis-max-isl dropped ${skipped.overMaxIsl}`);
  if (skipped.maxOslCapped !== undefined)
    parts.push(`output lengths capped at --synthesis-max-osl ${skipped.maxOslCapped}`);
  if ((skipped.promptUnscaled ?? 0) > 0)
    parts.push(`rows without input_length left unscaled ${skipped.promptUnscaled}`);
  return parts;
}

function applyContextOverride(dataset: Dataset, config: ProfileConfig): Dataset {
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
