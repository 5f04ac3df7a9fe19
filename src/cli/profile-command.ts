/**
 * `tokenload profile`: flag names and meanings follow AIPerf's `aiperf profile`. Every value is
 * parsed and validated here, before anything is sent; the result is a {@link ProfileConfig}.
 */
import { join } from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { DATASET_LOADERS } from '../dataset/registry.js';
import { ENDPOINTS } from '../endpoint/registry.js';
import type { ProfileConfig } from '../run/config.js';
import {
  collectExtraInputs,
  collectHeaders,
  integerAtLeast,
  numberIn,
  oneOf,
  parseModels,
  parseUrl,
  positiveNumber,
} from './parsers.js';

/** Raw commander option values of `profile`. */
interface ProfileFlags {
  model: string[];
  url: string;
  endpointType: string;
  endpoint?: string;
  streaming: boolean;
  inputFile?: string;
  customDatasetType?: string;
  fixedSchedule: boolean;
  fixedScheduleAutoOffset: boolean;
  fixedScheduleStartOffset?: number;
  fixedScheduleEndOffset?: number;
  synthesisSpeedupRatio: number;
  islBlockSize?: number;
  tokenizer: string;
  randomSeed?: number;
  requestTimeoutSeconds: number;
  extraInputs: Record<string, unknown>;
  header: Record<string, string>;
  apiKey?: string;
  useLegacyMaxTokens: boolean;
  useServerTokenCount: boolean;
  perChunkUsage: boolean;
  goodput?: string;
  concurrency?: number;
  artifactDir?: string;
  simulator: boolean;
  skipBadLines: boolean;
  timingPrecision: 'timer' | 'spin';
  benchmarkGracePeriod: number;
  ui: 'none' | 'simple';
}

/** Adds the `profile` options to `cmd`. */
export function defineProfileOptions(cmd: Command): Command {
  const datasetTypes = Object.keys(DATASET_LOADERS);
  const endpointTypes = Object.keys(ENDPOINTS);
  return cmd
    .requiredOption(
      '-m, --model <names>',
      'model name(s), comma-separated; requests round-robin',
      parseModels,
    )
    .option('-u, --url <url>', 'server URL; http:// implied', parseUrl, 'http://localhost:8000')
    .addOption(new Option('--endpoint-type <type>', 'endpoint API').choices(endpointTypes).default('chat'))
    .option('--endpoint <path>', 'URL path override (default per endpoint type)')
    .option('--streaming', 'stream responses (needed for TTFT, ITL, ICL)', false)
    .option('--input-file <path>', 'trace or dataset file')
    .addOption(new Option('--custom-dataset-type <type>', 'format of --input-file').choices(datasetTypes))
    .option('--fixed-schedule', 'replay on the trace timestamps (implied for timestamped traces)', false)
    .option('--fixed-schedule-auto-offset', 'start the schedule at the first timestamp (default on)', true)
    .option('--no-fixed-schedule-auto-offset', 'keep absolute timestamps: idle until the first one is due')
    .option(
      '--fixed-schedule-start-offset <ms>',
      'drop rows before this trace time (ms, inclusive)',
      numberIn(0),
    )
    .option(
      '--fixed-schedule-end-offset <ms>',
      'drop rows after this trace time (ms, inclusive)',
      numberIn(0),
    )
    .option('--synthesis-speedup-ratio <x>', 'divide trace timestamps by x', positiveNumber, 1)
    .option(
      '--isl-block-size <tokens>',
      'tokens per hash_id block (default: 16 Bailian, 512 Mooncake)',
      integerAtLeast(1),
    )
    .option(
      '--tokenizer <path>',
      'HF model folder or tokenizer.json (default: bundled Qwen3)',
      'builtin:qwen3',
    )
    .option(
      '--random-seed <n>',
      'seed for prompt synthesis (random and recorded if unset)',
      integerAtLeast(0),
    )
    .option('--request-timeout-seconds <s>', 'per-request time limit', positiveNumber, 21600)
    .option(
      '--extra-inputs <kv>',
      'body field key:value or a JSON object; repeatable',
      collectExtraInputs,
      {},
    )
    .option('-H, --header <header>', 'extra HTTP header "Name:Value"; repeatable', collectHeaders, {})
    .option('--api-key <key>', 'sent as Authorization: Bearer <key>')
    .option('--use-legacy-max-tokens', 'send max_tokens instead of max_completion_tokens', false)
    .option('--use-server-token-count', 'take ISL/OSL from the server usage object', false)
    .option('--per-chunk-usage', 'ask for per-chunk usage (continuous_usage_stats)', false)
    .option('--goodput <slos>', 'SLOs, e.g. "time_to_first_token:300 inter_token_latency:20" (ms)')
    .option('--concurrency <n>', 'cap on concurrent sessions', integerAtLeast(1))
    .option('--artifact-dir <dir>', 'output folder (default: artifacts/<run name>)')
    .option('--simulator', 'start the built-in simulator and profile it instead of --url', false)
    .option('--skip-bad-lines', 'skip (and count) malformed trace lines instead of failing', false)
    .addOption(
      new Option('--timing-precision <mode>', 'timer: one Node timer; spin: poll the last 1.5 ms (costs CPU)')
        .choices(['timer', 'spin'])
        .default('timer'),
    )
    .option(
      '--benchmark-grace-period <s>',
      'after Ctrl-C, wait this long for in-flight requests',
      numberIn(0),
      30,
    )
    .addOption(new Option('--ui <mode>', 'progress output').choices(['none', 'simple']).default('simple'));
}

/** AIPerf-style run folder name: `<model>-openai-<endpoint>-<stimulus>`, `/` → `_`. */
export function defaultArtifactDir(model: string, endpointType: string, stimulus: string): string {
  return join('artifacts', `${model.replaceAll('/', '_')}-openai-${endpointType}-${stimulus}`);
}

/**
 * Validates cross-flag rules and resolves defaults into a {@link ProfileConfig}.
 * @throws {InvalidArgumentError} naming the offending flag(s).
 */
export function resolveProfileConfig(flags: ProfileFlags, commandLine: string): ProfileConfig {
  if (flags.inputFile === undefined)
    throw new InvalidArgumentError('--input-file is required (trace replay).');
  if (flags.customDatasetType === undefined) {
    throw new InvalidArgumentError(
      `--custom-dataset-type is required with --input-file (one of ${Object.keys(DATASET_LOADERS).join(', ')}).`,
    );
  }
  const loader = DATASET_LOADERS[flags.customDatasetType as keyof typeof DATASET_LOADERS];
  const fixedSchedule = flags.fixedSchedule || loader.timestamped;
  const hasOffset =
    flags.fixedScheduleStartOffset !== undefined || flags.fixedScheduleEndOffset !== undefined;
  if (hasOffset && !fixedSchedule)
    throw new InvalidArgumentError('--fixed-schedule-*-offset requires --fixed-schedule.');
  const { fixedScheduleStartOffset: start, fixedScheduleEndOffset: end } = flags;
  if (start !== undefined && end !== undefined && end < start) {
    throw new InvalidArgumentError(
      `--fixed-schedule-end-offset (${end}) must be >= --fixed-schedule-start-offset (${start}).`,
    );
  }
  const model = flags.model[0] as string;
  const stimulus = fixedSchedule ? 'fixed_schedule' : `concurrency${flags.concurrency ?? 1}`;
  return {
    models: flags.model,
    url: flags.url,
    endpointType: flags.endpointType,
    ...(flags.endpoint === undefined
      ? {}
      : { endpointPath: flags.endpoint.startsWith('/') ? flags.endpoint : `/${flags.endpoint}` }),
    streaming: flags.streaming,
    inputFile: flags.inputFile,
    customDatasetType: flags.customDatasetType,
    fixedSchedule,
    // An explicit start offset becomes schedule zero (AIPerf: the two are mutually exclusive).
    fixedScheduleAutoOffset: start === undefined ? flags.fixedScheduleAutoOffset : false,
    ...(start === undefined ? {} : { fixedScheduleStartOffsetMs: start }),
    ...(end === undefined ? {} : { fixedScheduleEndOffsetMs: end }),
    synthesisSpeedupRatio: flags.synthesisSpeedupRatio,
    ...(flags.islBlockSize === undefined ? {} : { islBlockSize: flags.islBlockSize }),
    tokenizer: flags.tokenizer,
    randomSeed: flags.randomSeed ?? Math.floor(Math.random() * 2 ** 31),
    requestTimeoutSeconds: flags.requestTimeoutSeconds,
    extraInputs: flags.extraInputs,
    headers: flags.header,
    ...(flags.apiKey === undefined ? {} : { apiKey: flags.apiKey }),
    useLegacyMaxTokens: flags.useLegacyMaxTokens,
    useServerTokenCount: flags.useServerTokenCount,
    perChunkUsage: flags.perChunkUsage,
    ...(flags.goodput === undefined ? {} : { goodput: flags.goodput }),
    ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
    artifactDir: flags.artifactDir ?? defaultArtifactDir(model, flags.endpointType, stimulus),
    simulator: flags.simulator,
    skipBadLines: flags.skipBadLines,
    timingPrecision: flags.timingPrecision,
    gracePeriodSeconds: flags.benchmarkGracePeriod,
    ui: flags.ui,
    commandLine,
  };
}

export type { ProfileFlags };
export { oneOf };
