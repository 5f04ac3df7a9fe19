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
import { planRun, type RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { profileConfig } from '../config/schema.js';
import { IdealPrefixCache } from '../dataset/prefix-chain.js';
import { adapterFor } from '../endpoint/registry.js';
import { INPUTS_FILE_NAME, RAW_RECORDS_FILE_NAME, RECORDS_FILE_NAME } from '../export/index.js';
import { type RunInfo, runInfoOf } from '../export/summary-json.js';
import { measureClientFloor } from '../health/client-floor.js';
import type { ProbeAnswer } from '../preflight/preflight.js';
import { urlPathWarnings } from '../preflight/url-path-check.js';
import { waitForServer } from '../preflight/wait-for-model.js';
import { joinedPathNote, loopbackTwiceWarnings, requestUrlOf, serverTargets } from '../request/servers.js';
import { SERVER_METRICS_JSONL_FILE_NAME } from '../server-metrics/exports.js';
import { GPU_TELEMETRY_JSONL_FILE_NAME } from '../server-metrics/gpu-exports.js';
import type { ClockMeasurement } from '../shard/clock-offset.js';
import { runIdentityOf } from '../shard/run-identity.js';
import { type ShardInputs, shardDescription, sharePlan } from '../shard/shard-run.js';
import { checkStartAt, measureRunClock, shardReport } from '../shard/start-at.js';
import { CLI_SIMULATOR_WARMUP_MS } from '../simulator/options.js';
import { type SpawnedSimulator, spawnSimulator } from '../simulator/spawn.js';
import { RealClock } from '../timing/real-clock.js';
import { behindAnswerLine, idleGapCapLine } from '../timing/session-pacing.js';
import type { RunEnv } from '../util/run-env.js';
import {
  claimArtifactDir,
  createArtifactDir,
  holdsEarlierRun,
  recordingLogger,
  refuseInputAmongArtifacts,
  writeFailedSummary,
  writeRunLog,
} from './artifacts.js';
import {
  type ClientWarmupResult,
  WARMUP_LIGHT_LOAD_SHARE,
  WARMUP_ROUND_REQUESTS,
  WARMUP_WINDOW_ROUNDS,
  warmUpClient,
} from './client-warmup.js';
import type { RunContext } from './context.js';
import { finishRun, type RunOutcome } from './finish.js';
import { beginGpuScraper, spawnGpuScraper } from './gpu-telemetry-run.js';
import { describeStream, type InputNotes, prepareInputs } from './inputs.js';
import { runPhase } from './phase.js';
import { beginRunScraper, spawnRunScraper } from './server-metrics-run.js';
import { buildStrategy, describePhase, profilingLimits } from './strategy-factory.js';
import { resolveRunTokenizer, tokenizerFacts } from './tokenizer-setup.js';
import { describeRewrites } from './trace-check-run.js';
import { runWarmup } from './warmup-rounds.js';
import { resolveWorkers, type WorkersChoice, workersLine } from './workers-auto.js';

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
export async function runProfile(input: ProfileConfigInput, given: RunEnv): Promise<RunOutcome> {
  const asked = profileConfig(input);
  const recording = recordingLogger(given.log);
  const env: RunEnv = { ...given, log: recording.log };
  checkStartAt(asked, Date.now());
  // A shard runs its share of the load (shard/shard-run.ts); the summary keeps the values asked.
  const plan = sharePlan(planRun(asked));
  const startTime = new Date();
  const runInfo = runInfoOf(env.runLabels, asked.randomSeed, cliCommandOf(asked));
  // Its thread starts now, so that its start-up overlaps the run's; it scrapes once the target answers.
  const held: Held = {
    scraper: spawnRunScraper(plan, env),
    gpuScraper: spawnGpuScraper(plan, env),
    starting: null,
    warming: null,
    ownsFolder: false,
  };
  try {
    const { ctx, facts } = await startUp(plan, asked, env, held);
    const outcome = await runPhases(ctx, { ...facts, runInfo });
    await writeRunLog(plan.artifactDir, recording.lines);
    return outcome;
  } catch (err) {
    // Best effort: the error itself is what the caller must see, not a failure to record it.
    if (held.ownsFolder || !(await keepsEarlierRun(plan, env))) {
      await writeFailedSummary(asked, startTime, err, runInfo).catch(() => undefined);
      recording.lines.push(
        `${new Date().toISOString()} ERROR ${err instanceof Error ? err.message : String(err)}`,
      );
      await writeRunLog(plan.artifactDir, recording.lines).catch(() => undefined);
    }
    throw err;
  } finally {
    await held.scraper?.close();
    await held.gpuScraper?.close();
    await held.warming?.catch(() => undefined);
    const simulator = (await held.starting?.catch(() => null)) ?? null;
    await simulator?.close();
  }
}

/** What a run's start-up holds until the run ends, whatever happens. */
interface Held {
  scraper: ReturnType<typeof spawnRunScraper>;
  /** The DCGM scraper thread (`--gpu-telemetry`). */
  gpuScraper: ReturnType<typeof spawnGpuScraper>;
  /** The simulator child starting (`--simulator`). */
  starting: Promise<SpawnedSimulator> | null;
  /** The client's warm-up. */
  warming: Promise<void> | null;
  /** True once the run has claimed its folder (an earlier run's files are then gone). */
  ownsFolder: boolean;
}

/**
 * Everything before the first phase: tokenizer, simulator, inputs, the servers' answer, client
 * warm-up (beside the simulator's start with `--simulator`), the folder claimed (only once all of that worked), the clock offset and the scraper.
 */
async function startUp(
  plan: RunPlan,
  asked: ProfileConfig,
  env: RunEnv,
  held: Held,
): Promise<{ ctx: RunContext; facts: Omit<RunFacts, 'runInfo'> }> {
  refuseInputAmongArtifacts(plan.input.kind === 'file' ? plan.input.file : null, plan.artifactDir);
  await createArtifactDir(plan.artifactDir);
  const source = await resolveRunTokenizer(plan, env);
  // The simulator child boots (and loads its tokenizer) on another core while this process loads its own.
  held.starting = plan.simulator ? startSimulator(plan, source.path) : null;
  const { autoZeroMs, notes, ...inputs } = await prepareInputs(plan, env, source);
  const shardLine = shardDescription(plan, asked);
  if (shardLine !== null) env.log.info(shardLine);
  const streamed = inputs.stream !== null;
  const workers = await resolveWorkers(plan, inputs.dataset, streamed, env.machine ?? {}, (m) =>
    env.log.warn(m),
  );
  if (workers !== null) env.log.info(workersLine(workers));
  const shared = {
    config: workers === null ? plan : { ...plan, workers: workers.workers },
    env,
    adapter: adapterFor(plan.endpointType, { extraInputs: plan.extraInputs }),
    clock: new RealClock({ precision: plan.timingPrecision }),
    openClient: createClient,
    measureFloor: measureClientFloor,
    ...inputs,
  };
  // With --simulator, the client warms up against its own in-process simulator while the simulator
  // child finishes its own warm-up, so neither adds to the other's wait. A target of the user's is
  // checked first: one that does not answer is refused before the warm-up is spent.
  if (held.starting !== null) held.warming = warmUpClientLogged({ ...shared, targets: plan.url });
  const simulator = await held.starting;
  await held.warming;
  const targets = simulator === null ? plan.url : [simulator.url];
  if (simulator !== null) env.log.info(`simulator started at ${simulator.url} (pid ${simulator.pid})`);
  const probes = await checkServers({ ...shared, targets }, notes.warnings);
  if (held.starting === null) {
    held.warming = warmUpClientLogged({ ...shared, targets });
    await held.warming;
  }
  // From here on the folder holds this run's artifacts only, and a failure leaves a summary saying so.
  held.ownsFolder = await claimFolder(plan, env);
  const clockOffset = await measureRunClock(plan, targets, shared.clock, env);
  const [serverMetrics, gpuTelemetry] = env.stopSignal.aborted
    ? [null, null]
    : await Promise.all([
        beginRunScraper(held.scraper, plan, targets),
        beginGpuScraper(held.gpuScraper, plan, targets),
      ]);
  const facts = { asked, autoZeroMs, clockOffset, served: servedModels(probes), notes, workers };
  return { ctx: { ...shared, targets, serverMetrics, gpuTelemetry }, facts };
}

/**
 * Waits for the servers (`--wait-for-model-*`) and warns of a server likely listed twice and of a
 * `--url` path that does not fit the endpoint (logged, and added to `warnings`, which the summary and
 * the console report carry); returns each server's `/v1/models` answer.
 * @throws {ServerUnreachableError} as `waitForServer`.
 */
async function checkServers(
  ctx: Pick<RunContext, 'config' | 'env' | 'adapter' | 'targets'>,
  warnings: string[],
): Promise<ProbeAnswer[]> {
  const { config, env, adapter, targets } = ctx;
  const probes = await waitForServer(config, targets, env);
  const servers = serverTargets({ config, adapter, targets });
  const found = loopbackTwiceWarnings(servers);
  for (const [i, server] of servers.entries()) {
    const probe = probes[i];
    if (probe === undefined) continue;
    found.push(...urlPathWarnings({ target: server.url, adapter, requestPath: server.path, probe }));
  }
  for (const w of found) env.log.warn(w);
  warnings.push(...found);
  return probes;
}

/** Claims the artifact folder (and first a sweep's, `env.beforeClaim`); true once it is the run's. */
async function claimFolder(config: Pick<RunPlan, 'artifactDir'>, env: RunEnv): Promise<true> {
  await env.beforeClaim?.();
  await claimArtifactDir(config.artifactDir, env.log);
  return true;
}

/** A run that failed before it claimed its folder: whether an earlier run's artifacts are there (and kept). */
async function keepsEarlierRun(config: Pick<RunPlan, 'artifactDir'>, env: RunEnv): Promise<boolean> {
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
    `client warm-up: ${w.requests} requests (${w.errors} failed) in ${Math.round(w.durationMs)} ms against an in-process simulator; ${warmupCpuText(w)}; nothing was sent to the target`,
  );
}

/** How the warm-up's CPU per request went and why it ended, for its log line. */
function warmupCpuText(w: ClientWarmupResult): string {
  const first = w.cpuMsPerRequest[0];
  const last = w.cpuMsPerRequest[w.cpuMsPerRequest.length - 1];
  const why = {
    plateau: 'it stopped falling',
    light: `the run's rate keeps the client under ${WARMUP_LIGHT_LOAD_SHARE * 100} % of a core at that cost`,
    cap: 'the --client-warmup-ms cap came first',
    stopped: 'the run was stopped',
  }[w.endedBy];
  if (first === undefined || last === undefined)
    return `no round of ${WARMUP_ROUND_REQUESTS} requests completed (${why})`;
  const m = w.windowMeansMs;
  const windows =
    m === null
      ? ''
      : ` (last two windows of ${WARMUP_WINDOW_ROUNDS} rounds: ${m[0].toFixed(3)} → ${m[1].toFixed(3)} ms)`;
  return `CPU per request ${first.toFixed(2)} → ${last.toFixed(2)} ms over ${w.cpuMsPerRequest.length} rounds of at least ${WARMUP_ROUND_REQUESTS} requests${windows}; ended because ${why}`;
}

function startSimulator(
  config: Pick<RunPlan, 'models' | 'simulatorOptions'>,
  tokenizerPath: string,
): Promise<SpawnedSimulator> {
  const starting = spawnSimulator({
    tokenizer: tokenizerPath,
    models: [...config.models],
    // It warms up while this process loads its tokenizer, so the warm-up costs no wall time.
    warmupMs: CLI_SIMULATOR_WARMUP_MS,
    ...config.simulatorOptions,
  });
  // Awaited later; until then a failed start must not count as an unhandled rejection.
  starting.catch(() => undefined);
  return starting;
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
  /** The summary's `run_info`. */
  runInfo: RunInfo;
  clockOffset: ClockMeasurement | null;
  served: string[] | null;
  notes: InputNotes;
  /** What `--workers auto` chose; null when a number was given. */
  workers: WorkersChoice | null;
}

async function runPhases(runCtx: RunContext, facts: RunFacts): Promise<RunOutcome> {
  // One ideal prefix cache per server for the run: warmup requests reach the servers' caches too.
  const ctx: RunContext = { ...runCtx, idealCaches: runCtx.targets.map(() => new IdealPrefixCache()) };
  const { config, dataset } = ctx;
  logServers(ctx);
  const warmup = await runWarmup(ctx);
  const limits = profilingLimits(config, dataset);
  const strategy = buildStrategy(config, dataset, limits, 'profiling', {
    ...(ctx.stream === null ? {} : { feed: ctx.stream.turns }),
    ...(facts.autoZeroMs === undefined ? {} : { autoZeroMs: facts.autoZeroMs }),
  });
  ctx.env.log.info(`profiling: ${describePhase(strategy, limits)}`);
  // Run even when Ctrl-C came during start-up: the strategy sends nothing on a stopped signal, and the
  // phase still writes its (empty) records and inputs files, so every export and the report exist.
  const shortBefore = ctx.templateCounter?.shorterThanTemplate ?? 0;
  await Promise.all([ctx.serverMetrics?.mark(), ctx.gpuTelemetry?.mark()]);
  const profiling = await runPhase(ctx, 'profiling', strategy, limits);
  const serverMetrics = (await ctx.serverMetrics?.stop()) ?? null;
  const gpuTelemetry = (await ctx.gpuTelemetry?.stop()) ?? null;
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
    for (const line of [idleGapCapLine(load.replay.pacing), behindAnswerLine(load.replay.pacing)])
      if (line !== null) ctx.env.log.info(line);
  }
  const rewrites = facts.notes.traceCheck?.developerRewrites ?? null;
  if (rewrites !== null) ctx.env.log.info(describeRewrites(rewrites));
  const inputSkipped = config.input.kind === 'synthetic' ? null : (ctx.stream?.skipped ?? dataset.skipped);
  const requestUrl = serverTargets(ctx).map(requestUrlOf).join(', ');
  // A --simulator run measured the simulator: its URL is the one the summary names.
  const askedConfig = config.simulator
    ? { ...facts.asked, url: [...ctx.targets] as [string, ...string[]] }
    : facts.asked;
  return finishRun({
    config,
    askedConfig,
    runInfo: facts.runInfo,
    shard: shardReport(config, profiling, facts.clockOffset, runIdentityOf(askedConfig)),
    profiling,
    warmup: warmup?.phase ?? null,
    warmupUntilCached: warmup?.untilCached ?? null,
    strategy,
    synthesizer: ctx.synthesizer,
    inputSkipped,
    requestUrl,
    ...tokenizerFacts(ctx, shortBefore),
    serverMetrics,
    gpuTelemetry,
    servedModels: facts.served,
    traceCheck: facts.notes.traceCheck ?? null,
    inputWarnings: [...facts.notes.warnings, ...nonNull(facts.notes.lengths.warning())],
    workersChoice: facts.workers,
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

async function removePhaseFiles(artifactDir: string): Promise<void> {
  for (const name of [
    RECORDS_FILE_NAME,
    RAW_RECORDS_FILE_NAME,
    INPUTS_FILE_NAME,
    SERVER_METRICS_JSONL_FILE_NAME,
    GPU_TELEMETRY_JSONL_FILE_NAME,
  ])
    await rm(join(artifactDir, name), { force: true });
}

/** The command line a run records in `run_info` (already redacted); null for a library call. */
function cliCommandOf(config: ProfileConfig): string | null {
  return config.commandLine === '(library call)' ? null : config.commandLine;
}
