/**
 * One `tokenload profile` run, end to end: dataset → prompts → timing → client → records →
 * metrics → exports. Records stream to `profile_export.jsonl` as they complete; an interrupt
 * (the `stopSignal`) stops issuing, waits a bounded grace period for in-flight requests, cancels
 * what is left (recorded as cancelled), and still writes every export.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createHttpClient } from '../client/undici-client.js';
import { getDatasetLoader } from '../dataset/registry.js';
import type { Dataset } from '../dataset/types.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import { INPUTS_FILE_NAME, InputsWriter, RECORDS_FILE_NAME, RecordWriter } from '../export/index.js';
import { PromptSynthesizer } from '../prompt/synthesizer.js';
import { loadTokenizer } from '../prompt/tokenizer.js';
import { processRecord } from '../record/process.js';
import type { ProcessedRecord, RawRecord } from '../record/types.js';
import { spawnSimulator } from '../simulator/spawn.js';
import { TimeBase } from '../timing/clock.js';
import { createFixedSchedule, earliestFirstTurnMs } from '../timing/fixed-schedule.js';
import { RealClock } from '../timing/real-clock.js';
import type { LoadStrategy } from '../timing/types.js';
import type { ProfileConfig } from './config.js';
import { finishRun, type RunOutcome } from './finish.js';
import { type Logger, startProgress } from './progress.js';
import { preflight } from './preflight.js';
import { createSender } from './sender.js';

/** Injected environment of a run. */
export interface RunEnv {
  log: Logger;
  /** Aborting stops issuing new requests (Ctrl-C / SIGTERM). */
  stopSignal: AbortSignal;
  /** Aborting cancels in-flight requests at once (a second Ctrl-C). */
  forceSignal?: AbortSignal;
}

/**
 * Runs a profile and writes all artifacts.
 * @throws {DatasetError} / {TokenizerLoadError} / {ScheduleError} for bad input, before anything is sent.
 */
export async function runProfile(config: ProfileConfig, env: RunEnv): Promise<RunOutcome> {
  const tokenizer = loadTokenizer(config.tokenizer);
  const dataset = await loadDataset(config);
  env.log.info(describeDataset(dataset));
  const synthesizer = PromptSynthesizer.create(tokenizer, config.randomSeed);
  const adapter: EndpointAdapter = ENDPOINTS[config.endpointType as keyof typeof ENDPOINTS];
  const strategy = chooseStrategy(config, dataset);
  await mkdir(config.artifactDir, { recursive: true });
  const simulator = config.simulator
    ? await spawnSimulator({ tokenizer: config.tokenizer, models: config.models })
    : null;
  const target = simulator?.url ?? config.url;
  if (simulator !== null) env.log.info(`simulator started at ${simulator.url} (pid ${simulator.pid})`);
  try {
    await preflight(target, config.apiKey === undefined ? {} : { authorization: `Bearer ${config.apiKey}` });
    return await execute({ config, env, dataset, tokenizer, synthesizer, adapter, strategy, target });
  } finally {
    await simulator?.close();
  }
}

async function loadDataset(config: ProfileConfig): Promise<Dataset> {
  const loader = getDatasetLoader(config.customDatasetType);
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

function describeDataset(d: Dataset): string {
  const skipped = d.skipped.beforeStartOffset + d.skipped.afterEndOffset;
  const parts = [`${d.turnCount} requests in ${d.conversations.length} sessions from ${d.file}`];
  if (skipped > 0) parts.push(`${skipped} rows outside the offset window`);
  if (d.skipped.badLines > 0) parts.push(`${d.skipped.badLines} bad lines skipped`);
  return parts.join('; ');
}

function chooseStrategy(config: ProfileConfig, dataset: Dataset): LoadStrategy {
  const zeroMs = config.fixedScheduleAutoOffset
    ? earliestFirstTurnMs(dataset.conversations)
    : (config.fixedScheduleStartOffsetMs ?? 0) / config.synthesisSpeedupRatio;
  return createFixedSchedule({
    zeroMs,
    ...(config.concurrency === undefined ? {} : { concurrency: config.concurrency }),
  });
}

interface ExecuteInput {
  config: ProfileConfig;
  env: RunEnv;
  dataset: Dataset;
  tokenizer: ReturnType<typeof loadTokenizer>;
  synthesizer: PromptSynthesizer;
  adapter: EndpointAdapter;
  strategy: LoadStrategy;
  target: string;
}

async function execute(input: ExecuteInput): Promise<RunOutcome> {
  const { config, env, dataset } = input;
  const timeBase = new TimeBase();
  const recordWriter = new RecordWriter(join(config.artifactDir, RECORDS_FILE_NAME), timeBase);
  const inputsWriter = new InputsWriter(join(config.artifactDir, INPUTS_FILE_NAME));
  const client = createHttpClient({ url: input.target, connections: config.concurrency ?? 2500 });
  const records: ProcessedRecord[] = [];
  const cancel = new AbortController();
  const progress = startProgress(config.ui, env.log, dataset.turnCount);
  const onRecord = async (raw: RawRecord): Promise<void> => {
    const processed = processRecord(raw, {
      tokenizer: input.tokenizer,
      useServerTokenCount: config.useServerTokenCount,
      streaming: config.streaming,
    });
    records.push(processed);
    progress.onRecord(processed);
    await recordWriter.write(processed);
  };
  const path = basePath(input.target) + (config.endpointPath ?? input.adapter.defaultPath);
  const dispatch = createSender({
    config,
    client,
    adapter: input.adapter,
    path,
    synthesizer: input.synthesizer,
    tokenizer: input.tokenizer,
    cancelSignal: cancel.signal,
    onBody: (sessionId, _turn, body) => inputsWriter.add(sessionId, body),
    onRecord,
  });
  const startTime = new Date();
  const stopGrace = armGrace(env.stopSignal, config.gracePeriodSeconds, cancel, env.log);
  env.forceSignal?.addEventListener('abort', () => cancel.abort(), { once: true });
  try {
    await input.strategy.run({
      conversations: dataset.conversations,
      clock: new RealClock({ precision: config.timingPrecision }),
      dispatch,
      signal: env.stopSignal,
    });
  } finally {
    stopGrace();
    progress.stop();
    await client.close();
    await recordWriter.close();
    await inputsWriter.close();
  }
  return finishRun({
    config,
    records,
    startTime,
    endTime: new Date(),
    wasCancelled: env.stopSignal.aborted,
    strategy: input.strategy,
    extraWarnings:
      input.synthesizer.blocks.sizeConflicts > 0
        ? [sizeConflictWarning(input.synthesizer.blocks.sizeConflicts)]
        : [],
  });
}

function sizeConflictWarning(n: number): string {
  return `${n} hash_ids appeared with two different block sizes; check --isl-block-size`;
}

/** Path part of the target URL (a base path given in `--url`), without a trailing slash. */
function basePath(target: string): string {
  const p = new URL(target).pathname;
  return p === '/' ? '' : p.replace(/\/+$/, '');
}

/** After the stop signal, cancel in-flight requests once the grace period has passed. */
function armGrace(stop: AbortSignal, graceS: number, cancel: AbortController, log: Logger): () => void {
  let timer: NodeJS.Timeout | null = null;
  const onStop = (): void => {
    log.info(`stopping: no new requests; waiting up to ${graceS} s for in-flight requests`);
    timer = setTimeout(() => cancel.abort(), graceS * 1000);
  };
  if (stop.aborted) onStop();
  else stop.addEventListener('abort', onStop, { once: true });
  return () => {
    stop.removeEventListener('abort', onStop);
    if (timer !== null) clearTimeout(timer);
  };
}
