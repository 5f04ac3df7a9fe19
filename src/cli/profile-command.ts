/**
 * Cross-flag validation and defaults for `tokenload profile`: turns the raw option values into a
 * {@link ProfileConfig} (or one per sweep value). Every rule names the flags involved.
 */
import { join } from 'node:path';
import { InvalidArgumentError } from 'commander';
import { DATASET_LOADERS } from '../dataset/registry.js';
import { parseGoodput } from '../metrics/goodput.js';
import type { ProfileConfig } from '../run/config.js';
import { stimulusName } from '../run/strategy-factory.js';
import { SimulatorOptionsSchema } from '../simulator/options.js';
import type { ArrivalPattern } from '../timing/arrivals.js';
import { kebab } from './parsers.js';

/** Raw commander option values of `profile` (see profile-options.ts). */
export interface ProfileFlags {
  model: string[];
  url: string;
  endpointType: string;
  endpoint?: string;
  streaming: boolean;
  requestTimeoutSeconds: number;
  extraInputs: Record<string, unknown>;
  header: Record<string, string>;
  apiKey?: string;
  useLegacyMaxTokens: boolean;
  useServerTokenCount: boolean;
  perChunkUsage: boolean;
  tokenizer: string;
  randomSeed?: number;
  inputFile?: string;
  customDatasetType?: string;
  datasetSamplingStrategy?: 'sequential' | 'random' | 'shuffle';
  conversationContextMode?: ProfileConfig['contextModeOverride'];
  skipBadLines: boolean;
  traceStreaming: boolean;
  islBlockSize?: number;
  isl?: number;
  islStddev?: number;
  osl?: number;
  oslStddev?: number;
  seqDist?: string;
  numDatasetEntries?: number;
  numPrefixPrompts?: number;
  prefixPromptLength?: number;
  sharedSystemPromptLength?: number;
  userContextPromptLength?: number;
  sessionTurnsMean?: number;
  sessionTurnsStddev?: number;
  sessionTurnDelayMean?: number;
  sessionTurnDelayStddev?: number;
  sessionTurnDelayRatio?: number;
  fixedSchedule?: boolean;
  fixedScheduleAutoOffset: boolean;
  fixedScheduleStartOffset?: number;
  fixedScheduleEndOffset?: number;
  synthesisSpeedupRatio: number;
  concurrency?: number[];
  requestRate?: number[];
  arrivalPattern?: ArrivalPattern;
  arrivalSmoothness?: number;
  requestCount?: number;
  benchmarkDuration?: number;
  benchmarkGracePeriod: number;
  concurrencyRampDuration?: number;
  requestRateRampDuration?: number;
  warmupRequestCount?: number;
  warmupDuration?: number;
  requestCancellationRate?: number;
  requestCancellationDelay: number;
  goodput?: string;
  artifactDir?: string;
  simulator: boolean;
  simulatorOption: Record<string, unknown>;
  timingPrecision: 'timer' | 'spin';
  clientWarmupMs: number;
  workers?: number;
  ui: 'none' | 'simple' | 'dashboard';
  config?: string;
}

const fail = (message: string): never => {
  throw new InvalidArgumentError(message);
};

/** AIPerf-style run folder name: `<model>-openai-<endpoint>-<stimulus>`, `/` → `_`. */
export function defaultArtifactDir(model: string, endpointType: string, stimulus: string): string {
  return join('artifacts', `${model.replaceAll('/', '_')}-openai-${endpointType}-${stimulus}`);
}

function checkDataset(f: ProfileFlags): boolean {
  if (f.inputFile !== undefined && f.customDatasetType === undefined) {
    fail(
      `--custom-dataset-type is required with --input-file (one of ${Object.keys(DATASET_LOADERS).join(', ')}).`,
    );
  }
  if (f.inputFile === undefined && f.customDatasetType !== undefined)
    fail('--custom-dataset-type needs --input-file.');
  const loader =
    f.customDatasetType === undefined
      ? undefined
      : DATASET_LOADERS[f.customDatasetType as keyof typeof DATASET_LOADERS];
  return f.fixedSchedule ?? loader?.timestamped ?? false;
}

function checkSchedule(f: ProfileFlags, fixed: boolean): void {
  const hasOffset = f.fixedScheduleStartOffset !== undefined || f.fixedScheduleEndOffset !== undefined;
  if (hasOffset && !fixed)
    fail('--fixed-schedule-start/end-offset require a fixed schedule (--fixed-schedule).');
  const { fixedScheduleStartOffset: start, fixedScheduleEndOffset: end } = f;
  if (start !== undefined && end !== undefined && end < start) {
    fail(`--fixed-schedule-end-offset (${end}) must be >= --fixed-schedule-start-offset (${start}).`);
  }
  if (fixed && f.inputFile === undefined) fail('--fixed-schedule needs a timestamped --input-file.');
  if (fixed && f.requestRate !== undefined)
    fail('--request-rate cannot be combined with a fixed schedule (use --no-fixed-schedule).');
  if (fixed && f.datasetSamplingStrategy !== undefined)
    fail('--dataset-sampling-strategy is not allowed with a fixed schedule.');
  if (fixed && f.requestRateRampDuration !== undefined)
    fail('--request-rate-ramp-duration is not allowed with a fixed schedule.');
  if (fixed && (f.concurrency?.length ?? 0) > 1)
    fail('sweeps (lists in --concurrency) are not allowed with a fixed schedule.');
}

function checkSimulatorOptions(f: ProfileFlags): Record<string, unknown> {
  const opts = f.simulatorOption;
  if (Object.keys(opts).length === 0) return {};
  if (!f.simulator) fail('--simulator-option needs --simulator.');
  const known = Object.keys(SimulatorOptionsSchema.shape);
  for (const key of Object.keys(opts)) {
    if (!known.includes(key))
      fail(`--simulator-option ${kebab(key)}: unknown simulator parameter (see tokenload simulate --help).`);
  }
  const parsed = SimulatorOptionsSchema.safeParse(opts);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    fail(`--simulator-option ${kebab(String(issue?.path[0] ?? ''))}: ${issue?.message ?? 'invalid value'}.`);
  }
  return opts;
}

function checkGoodput(f: ProfileFlags): void {
  if (f.goodput === undefined) return;
  try {
    parseGoodput(f.goodput);
  } catch (err) {
    fail((err as Error).message);
  }
}

function checkLoad(f: ProfileFlags): void {
  if (f.arrivalSmoothness !== undefined && f.arrivalPattern !== 'gamma')
    fail('--arrival-smoothness requires --arrival-pattern gamma.');
  if (f.arrivalPattern !== undefined && f.requestRate === undefined)
    fail('--arrival-pattern requires --request-rate.');
  if (f.requestRateRampDuration !== undefined && f.requestRate === undefined)
    fail('--request-rate-ramp-duration requires --request-rate.');
  if ((f.concurrency?.length ?? 0) > 1 && (f.requestRate?.length ?? 0) > 1)
    fail('sweep one of --concurrency or --request-rate, not both.');
  if (f.requestCount !== undefined && f.benchmarkDuration !== undefined)
    fail('--request-count and --benchmark-duration cannot be combined.');
  if (f.requestCancellationDelay > 0 && f.requestCancellationRate === undefined)
    fail('--request-cancellation-delay requires --request-cancellation-rate.');
}

function syntheticOptions(f: ProfileFlags): Record<string, unknown> | undefined {
  if (f.inputFile !== undefined) return undefined;
  const pick: Record<string, unknown> = {
    numDatasetEntries: f.numDatasetEntries,
    isl: f.isl,
    islStddev: f.islStddev,
    osl: f.osl,
    oslStddev: f.oslStddev,
    seqDist: f.seqDist,
    numPrefixPrompts: f.numPrefixPrompts,
    prefixPromptLength: f.prefixPromptLength,
    sharedSystemPromptLength: f.sharedSystemPromptLength,
    userContextPromptLength: f.userContextPromptLength,
    sessionTurnsMean: f.sessionTurnsMean,
    sessionTurnsStddev: f.sessionTurnsStddev,
    sessionTurnDelayMeanMs: f.sessionTurnDelayMean,
    sessionTurnDelayStddevMs: f.sessionTurnDelayStddev,
    sessionTurnDelayRatio: f.sessionTurnDelayRatio,
    blockSize: f.islBlockSize,
  };
  return Object.fromEntries(Object.entries(pick).filter(([, v]) => v !== undefined));
}

/** Fields that only exist when set, so `exactOptionalPropertyTypes`-style consumers see no `undefined`. */
function defined<T extends Record<string, unknown>>(obj: T): Partial<T> {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Validates cross-flag rules and resolves defaults into one {@link ProfileConfig} per sweep value
 * (one element without a sweep). Sweep runs go to `<artifact dir>/<stimulus>/`.
 * @throws {InvalidArgumentError} naming the offending flag(s).
 */
export function resolveProfileConfigs(f: ProfileFlags, commandLine: string): ProfileConfig[] {
  const fixedSchedule = checkDataset(f);
  checkSchedule(f, fixedSchedule);
  checkLoad(f);
  checkGoodput(f);
  const start = f.fixedScheduleStartOffset;
  const base: ProfileConfig = {
    models: f.model,
    url: f.url,
    endpointType: f.endpointType,
    streaming: f.streaming,
    fixedSchedule,
    fixedScheduleAutoOffset: start === undefined ? f.fixedScheduleAutoOffset : false,
    synthesisSpeedupRatio: f.synthesisSpeedupRatio,
    tokenizer: f.tokenizer,
    randomSeed: f.randomSeed ?? Math.floor(Math.random() * 2 ** 31),
    requestTimeoutSeconds: f.requestTimeoutSeconds,
    extraInputs: f.extraInputs,
    headers: f.header,
    useLegacyMaxTokens: f.useLegacyMaxTokens,
    useServerTokenCount: f.useServerTokenCount,
    perChunkUsage: f.perChunkUsage,
    artifactDir: '',
    simulator: f.simulator,
    simulatorOptions: checkSimulatorOptions(f),
    skipBadLines: f.skipBadLines,
    traceStreaming: f.traceStreaming,
    timingPrecision: f.timingPrecision,
    clientWarmupMs: f.clientWarmupMs,
    gracePeriodSeconds: f.benchmarkGracePeriod,
    ui: f.ui === 'dashboard' ? 'simple' : f.ui,
    commandLine,
    ...defined({
      endpointPath:
        f.endpoint === undefined ? undefined : f.endpoint.startsWith('/') ? f.endpoint : `/${f.endpoint}`,
      inputFile: f.inputFile,
      customDatasetType: f.customDatasetType,
      synthetic: syntheticOptions(f),
      fixedScheduleStartOffsetMs: start,
      fixedScheduleEndOffsetMs: f.fixedScheduleEndOffset,
      islBlockSize: f.islBlockSize,
      apiKey: f.apiKey,
      goodput: f.goodput,
      arrivalPattern: f.arrivalPattern,
      arrivalSmoothness: f.arrivalSmoothness,
      requestCount: f.requestCount,
      benchmarkDurationSeconds: f.benchmarkDuration,
      concurrencyRampSeconds: f.concurrencyRampDuration,
      requestRateRampSeconds: f.requestRateRampDuration,
      warmupRequestCount: f.warmupRequestCount,
      warmupDurationSeconds: f.warmupDuration,
      datasetSamplingStrategy: f.datasetSamplingStrategy,
      contextModeOverride: f.conversationContextMode,
      requestCancellationRatePct: f.requestCancellationRate,
      workers: f.workers,
      requestCancellationDelaySeconds:
        f.requestCancellationRate === undefined ? undefined : f.requestCancellationDelay,
    }),
  };
  return expandSweep(base, f);
}

function expandSweep(base: ProfileConfig, f: ProfileFlags): ProfileConfig[] {
  const model = base.models[0] as string;
  const concurrencies = f.concurrency ?? [undefined];
  const rates = f.requestRate ?? [undefined];
  const sweep = concurrencies.length > 1 || rates.length > 1;
  const out: ProfileConfig[] = [];
  for (const c of concurrencies) {
    for (const r of rates) {
      const cfg: ProfileConfig = { ...base, ...defined({ concurrency: c, requestRate: r }) };
      const stimulus = stimulusName(cfg);
      const root = f.artifactDir ?? defaultArtifactDir(model, base.endpointType, sweep ? 'sweep' : stimulus);
      cfg.artifactDir = sweep ? join(root, stimulus) : root;
      out.push(cfg);
    }
  }
  return out;
}
