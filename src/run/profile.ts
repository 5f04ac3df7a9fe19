/**
 * One `tokenload profile` run, end to end: dataset → prompts → timing → client → records →
 * metrics → exports. An optional warmup phase runs first and is summarized separately. Records
 * stream to `profile_export.jsonl` as they complete; an interrupt (the `stopSignal`) stops issuing,
 * waits a bounded grace period for in-flight requests, cancels what is left (recorded as
 * cancelled), and still writes every export.
 */
import { mkdir } from 'node:fs/promises';
import { getDatasetLoader } from '../dataset/registry.js';
import { generateSyntheticDataset, SYNTHETIC_SOURCE } from '../dataset/synthetic.js';
import type { SyntheticDatasetOptions } from '../dataset/synthetic-options.js';
import type { Dataset } from '../dataset/types.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import { PromptSynthesizer } from '../prompt/synthesizer.js';
import { loadTokenizer, type TextTokenizer } from '../prompt/tokenizer.js';
import { spawnSimulator } from '../simulator/spawn.js';
import type { ProfileConfig } from './config.js';
import { finishRun, type RunOutcome } from './finish.js';
import { type PhaseResult, runPhase } from './phase.js';
import { preflight } from './preflight.js';
import type { Logger } from './progress.js';
import { buildStrategy, profilingLimits, warmupLimits } from './strategy-factory.js';

/** Injected environment of a run. */
export interface RunEnv {
  log: Logger;
  /** Aborting stops issuing new requests (Ctrl-C / SIGTERM). */
  stopSignal: AbortSignal;
  /** Aborting cancels in-flight requests at once (a second Ctrl-C). */
  forceSignal?: AbortSignal;
}

/** What every phase shares. */
export interface RunContext {
  config: ProfileConfig;
  env: RunEnv;
  dataset: Dataset;
  tokenizer: TextTokenizer;
  synthesizer: PromptSynthesizer;
  adapter: EndpointAdapter;
  /** Server base URL (origin + optional base path). */
  target: string;
}

/**
 * Runs a profile and writes all artifacts.
 * @throws {DatasetError} / {TokenizerLoadError} / {ScheduleError} / {ServerUnreachableError} for
 *   bad input or an unreachable server, before anything is measured.
 */
export async function runProfile(config: ProfileConfig, env: RunEnv): Promise<RunOutcome> {
  const tokenizer = loadTokenizer(config.tokenizer);
  const dataset = applyContextOverride(await loadDataset(config), config);
  env.log.info(describeDataset(dataset));
  const synthesizer = PromptSynthesizer.create(tokenizer, config.randomSeed);
  const adapter: EndpointAdapter = ENDPOINTS[config.endpointType as keyof typeof ENDPOINTS];
  await mkdir(config.artifactDir, { recursive: true });
  const simulator = config.simulator
    ? await spawnSimulator({
        tokenizer: config.tokenizer,
        models: config.models,
        ...(config.simulatorOptions ?? {}),
      })
    : null;
  const target = simulator?.url ?? config.url;
  if (simulator !== null) env.log.info(`simulator started at ${simulator.url} (pid ${simulator.pid})`);
  try {
    await preflight(target, config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` });
    const ctx: RunContext = { config, env, dataset, tokenizer, synthesizer, adapter, target };
    return await runPhases(ctx);
  } finally {
    await simulator?.close();
  }
}

async function runPhases(ctx: RunContext): Promise<RunOutcome> {
  const { config, dataset } = ctx;
  let warmup: PhaseResult | null = null;
  const warm = warmupLimits(config);
  if (warm !== null) {
    ctx.env.log.info('warmup phase');
    warmup = await runPhase(ctx, 'warmup', buildStrategy(config, dataset, warm, 'warmup'), warm);
  }
  const limits = profilingLimits(config, dataset);
  const strategy = buildStrategy(config, dataset, limits, 'profiling');
  ctx.env.log.info(`profiling: ${strategy.describe()}`);
  const profiling = ctx.env.stopSignal.aborted ? null : await runPhase(ctx, 'profiling', strategy, limits);
  return finishRun({ config, profiling, warmup, strategy, synthesizer: ctx.synthesizer });
}

async function loadDataset(config: ProfileConfig): Promise<Dataset> {
  if (config.inputFile === undefined) {
    return generateSyntheticDataset({
      ...(config.synthetic ?? {}),
      randomSeed: config.randomSeed,
    } as SyntheticDatasetOptions);
  }
  const loader = getDatasetLoader(config.customDatasetType ?? '');
  return loader.load(config.inputFile, {
    ...(config.fixedScheduleStartOffsetMs === undefined
      ? {}
      : { startOffsetMs: config.fixedScheduleStartOffsetMs }),
    ...(config.fixedScheduleEndOffsetMs === undefined
      ? {}
      : { endOffsetMs: config.fixedScheduleEndOffsetMs }),
    speedupRatio: config.synthesisSpeedupRatio,
    ...(config.islBlockSize === undefined ? {} : { blockSize: config.islBlockSize }),
    skipBadLines: config.skipBadLines,
  });
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
  return parts.join('; ');
}
