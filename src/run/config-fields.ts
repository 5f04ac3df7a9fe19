/**
 * The fields of a profile run's configuration, each with its AIPerf flag, unit, default and help
 * text ({@link option}). Grouped as `aiperf profile --help` groups them. Field names follow the
 * flags they come from with units in the names; `./config.ts` adds the cross-field rules.
 */
import { z } from 'zod';
import { DATASET_TYPE_NAMES } from '../dataset/registry.js';
import { SAMPLING_STRATEGIES } from '../dataset/sampling.js';
import { SyntheticOptionsSchema } from '../dataset/synthetic-options.js';
import { ENDPOINT_TYPES } from '../endpoint/registry.js';
import { ConfigError } from '../errors.js';
import { revisionProblem } from '../prompt/hf-cache.js';
import { SimulatorOptionsSchema } from '../simulator/options.js';
import { ARRIVAL_PATTERNS } from '../timing/arrivals.js';
import { option, optionFields } from '../util/option-meta.js';
import {
  camel,
  camelKeys,
  collectExtraInputs,
  collectHeaders,
  collectSimulatorOption,
  collectUrls,
  parseModels,
} from '../util/option-values.js';
import { looksNumeric, plainNumber, plainNumberProblem } from '../util/plain-number.js';
import { serverMetricsFields, waitForModelFields } from './config-server-fields.js';
import { shardFields } from './config-shard-fields.js';
import { synthesisFields } from './config-synthesis-fields.js';

/** Context modes a user may force with `--conversation-context-mode`. */
export const CONTEXT_MODES = [
  'deltas_without_responses',
  'deltas_with_responses',
  'message_array_with_responses',
] as const;

/** Adds the issue of a `--tokenizer-revision` no branch, tag or commit can have. */
function checkRevision(revision: string, ctx: z.RefinementCtx<string>): void {
  const problem = revisionProblem(revision);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(revision)} ${problem}` });
}

const SIMULATOR_FIELDS = optionFields(SimulatorOptionsSchema);

/**
 * Accumulates `--simulator-option name=value`: a number parameter's value must be plain decimal,
 * an integer one's digits only, as its own `tokenload simulate` flag's (util/plain-number.ts).
 * @throws {ConfigError} for text that is not `name=value`, or such a number.
 */
function simulatorOption(text: string, previous?: Record<string, unknown>): Record<string, unknown> {
  const next = collectSimulatorOption(text, previous);
  const at = text.indexOf('=');
  const field = SIMULATOR_FIELDS.find((f) => f.path[0] === camel(text.slice(0, at).trim()));
  const raw = text.slice(at + 1).trim();
  if (field?.kind === 'number' && looksNumeric(raw, field.integer))
    throw new ConfigError(`${field.meta.flag}: ${plainNumberProblem(raw, field.integer)}`);
  return next;
}

const positive = z.number().positive();
const int = (min: number) => z.number().int().min(min);
/**
 * `--url` as given (a URL, a comma-separated list, or a list of either) → the normalized server
 * URLs, in order; a bad URL or a repeated server becomes the issue.
 */
const urlList = z.union([z.string(), z.array(z.string())]).transform((v, ctx) => {
  try {
    return (Array.isArray(v) ? v : [v]).reduce<string[]>((prev, item) => collectUrls(item, prev), []);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** Endpoint, request and tokenizer options. */
export const endpointFields = {
  /** `-m/--model`: one or more model names; requests round-robin over them. */
  models: option(z.array(z.string().min(1)).min(1), {
    flag: 'model',
    short: '-m',
    unit: 'names',
    help: 'model name(s): a comma list or the flag repeated; requests round-robin',
    parse: (v, prev) => [...((prev as string[] | undefined) ?? []), ...parseModels(v)],
    repeatable: true,
  }),
  /**
   * `-u/--url`: the servers, each an origin and optional base path (`http://` implied); several
   * (repeated or comma-separated) spread the sessions round-robin, every turn of a session on one.
   */
  url: option(urlList.default(['http://localhost:8000']), {
    flag: 'url',
    short: '-u',
    unit: 'url',
    help: 'server URL, http:// implied, a /v1 base understood; repeat or comma-separate for several replicas (sessions round-robin, each session on one server)',
    defaultText: 'http://localhost:8000',
    parse: (v, prev) => collectUrls(v, prev as string[] | undefined),
    repeatable: true,
  }),
  /** `--endpoint-type`: which API the requests use. */
  endpointType: option(z.enum(ENDPOINT_TYPES).default('chat'), {
    flag: 'endpoint-type',
    unit: 'type',
    help: 'endpoint API',
  }),
  /** `--endpoint`: URL path override (a leading `/` is added). */
  endpointPath: option(
    z
      .string()
      .min(1)
      .transform((p) => (p.startsWith('/') ? p : `/${p}`))
      .optional(),
    {
      flag: 'endpoint',
      unit: 'path',
      help: 'URL path override',
      defaultText: 'per endpoint type',
    },
  ),
  /** `--streaming`: stream responses (needed for TTFT, ITL). */
  streaming: option(z.boolean().default(false), {
    flag: 'streaming',
    help: 'stream responses (needed for TTFT, ITL, ICL)',
  }),
  /** `--request-timeout-seconds`: per-request time limit, s. */
  requestTimeoutSeconds: option(positive.default(21600), {
    flag: 'request-timeout-seconds',
    unit: 's',
    help: 'per-request time limit',
  }),
  /** `--extra-inputs`: fields merged into every request body. */
  extraInputs: option(z.record(z.string(), z.unknown()).default({}), {
    flag: 'extra-inputs',
    unit: 'kv',
    help: 'body field key:value or a JSON object; repeatable',
    parse: (v, prev) => collectExtraInputs(v, prev as Record<string, unknown> | undefined),
    repeatable: true,
  }),
  /** `-H/--header`: extra HTTP headers, name → value. */
  headers: option(z.record(z.string(), z.string()).default({}), {
    flag: 'header',
    short: '-H',
    unit: 'header',
    help: 'extra HTTP header "Name:Value"; repeatable (auth-like values are redacted in artifacts)',
    parse: (v, prev) => collectHeaders(v, prev as Record<string, string> | undefined),
    repeatable: true,
  }),
  /** `--api-key`: sent as `Authorization: Bearer <key>`. */
  apiKey: option(z.string().optional(), {
    flag: 'api-key',
    unit: 'key',
    help: 'sent as Authorization: Bearer <key>',
    secret: true,
  }),
  /** `--use-legacy-max-tokens`: send `max_tokens` instead of `max_completion_tokens`. */
  useLegacyMaxTokens: option(z.boolean().default(false), {
    flag: 'use-legacy-max-tokens',
    help: 'send max_tokens instead of max_completion_tokens',
  }),
  /** `--use-server-token-count`: ISL/OSL from the server's usage object. */
  useServerTokenCount: option(z.boolean().default(false), {
    flag: 'use-server-token-count',
    help: 'take ISL/OSL from the server usage object',
  }),
  /**
   * `--per-chunk-usage`: ask for per-chunk usage (`continuous_usage_stats`), and let ITL divide by
   * OSL − (the first content chunk's running token count) instead of OSL − 1 (AIPerf).
   */
  perChunkUsage: option(z.boolean().default(false), {
    flag: 'per-chunk-usage',
    help: "ask for per-chunk usage (continuous_usage_stats); ITL then divides by OSL − the first chunk's tokens",
  }),
  /**
   * `--tokenizer`: a model folder, a tokenizer.json path, a Hugging Face model id (the local cache,
   * then the Hub: prompt/tokenizer-source.ts) or `builtin` (the bundled Qwen3); default the first
   * `--model` name.
   */
  tokenizer: option(z.string().min(1).optional(), {
    flag: 'tokenizer',
    unit: 'name',
    help: 'HF model id (local cache, then the Hub), model folder or tokenizer.json; builtin = the bundled Qwen3',
    defaultText: 'the --model name',
  }),
  /**
   * `--tokenizer-revision`: branch, tag or commit of a Hub tokenizer; a name that could not be a
   * ref file inside the cache (`..`, absolute, backslash: prompt/hf-cache.ts `revisionProblem`) is refused.
   */
  tokenizerRevision: option(z.string().min(1).superRefine(checkRevision).default('main'), {
    flag: 'tokenizer-revision',
    unit: 'rev',
    help: 'branch, tag or commit hash of a Hub tokenizer',
  }),
  /** `--apply-chat-template`: count ISL through the tokenizer's chat template, as the server counts it. */
  applyChatTemplate: option(z.boolean().default(false), {
    flag: 'apply-chat-template',
    help: "count ISL through the tokenizer's chat template (as the server does); synthesized prompts shrink by its tokens",
  }),
  /** `--random-seed`: seed of data and arrivals; drawn at random (and recorded) when unset. */
  randomSeed: option(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(), {
    flag: 'random-seed',
    unit: 'n',
    help: 'seed for data and arrivals',
    defaultText: 'random, recorded',
  }),
  ...waitForModelFields,
};

/** Trace and dataset options. */
export const inputFields = {
  /** `--input-file`: trace or dataset file; absent for a synthetic dataset. */
  inputFile: option(z.string().min(1).optional(), {
    flag: 'input-file',
    unit: 'path',
    help: 'trace or dataset file',
    defaultText: 'synthetic data',
  }),
  /** `--custom-dataset-type`: format of `--input-file` (required with it). */
  customDatasetType: option(z.enum(DATASET_TYPE_NAMES).optional(), {
    flag: 'custom-dataset-type',
    unit: 'type',
    help: 'format of --input-file',
  }),
  /** `--dataset-sampling-strategy`: order of conversations. */
  datasetSamplingStrategy: option(z.enum(SAMPLING_STRATEGIES).optional(), {
    flag: 'dataset-sampling-strategy',
    unit: 's',
    help: 'order of conversations',
    defaultText: 'per dataset type',
  }),
  /** `--conversation-context-mode`: overrides the dataset type's context mode. */
  contextModeOverride: option(z.enum(CONTEXT_MODES).optional(), {
    flag: 'conversation-context-mode',
    unit: 'mode',
    help: 'override how history is sent',
    defaultText: 'per dataset type',
  }),
  /** `--skip-bad-lines`: count and skip malformed trace lines instead of failing. */
  skipBadLines: option(z.boolean().default(false), {
    flag: 'skip-bad-lines',
    help: 'skip (and count) malformed trace lines instead of failing',
  }),
  /**
   * `--trace-streaming`: a fixed-schedule replay of a streamable trace (Bailian, Mooncake) reads
   * the file while it replays. Off: the whole file is read and validated first (AIPerf's way).
   */
  traceStreaming: option(z.boolean().default(true), {
    flag: 'trace-streaming',
    help: 'fixed schedule: read the trace while it replays; --no-trace-streaming reads and validates the whole trace before the first request',
  }),
  /** `--isl-block-size`: tokens per hash id (default from the dataset type: 16 Bailian, 512 Mooncake). */
  islBlockSize: option(int(1).optional(), {
    flag: 'isl-block-size',
    unit: 'tokens',
    help: 'tokens per hash_id block',
    defaultText: '16 Bailian and synthetic, 512 Mooncake',
  }),
  /** Synthetic dataset options (`--isl`, `--osl`, …), used when there is no input file. */
  synthetic: SyntheticOptionsSchema.optional(),
};

/** Fixed-schedule options. */
export const scheduleFields = {
  /** `--fixed-schedule`: replay on the trace timestamps; implied by a timestamped dataset type. */
  fixedSchedule: option(z.boolean().optional(), {
    flag: 'fixed-schedule',
    help: 'replay on the trace timestamps; --no-fixed-schedule ignores them (use --concurrency or --request-rate)',
    defaultText: 'on for timestamped traces',
  }),
  /** `--fixed-schedule-auto-offset`: start at the first timestamp (ours on; AIPerf's default off). */
  fixedScheduleAutoOffset: option(z.boolean().default(true), {
    flag: 'fixed-schedule-auto-offset',
    help: 'start the schedule at the first timestamp; --no-fixed-schedule-auto-offset idles until the first one is due',
  }),
  /** `--fixed-schedule-start-offset`: drop rows before this trace time, ms (inclusive). */
  fixedScheduleStartOffsetMs: option(z.number().min(0).optional(), {
    flag: 'fixed-schedule-start-offset',
    unit: 'ms',
    help: 'drop rows before this trace time (inclusive)',
  }),
  /** `--fixed-schedule-end-offset`: drop rows after this trace time, ms (inclusive). */
  fixedScheduleEndOffsetMs: option(z.number().min(0).optional(), {
    flag: 'fixed-schedule-end-offset',
    unit: 'ms',
    help: 'drop rows after this trace time (inclusive)',
  }),
  /** `--synthesis-speedup-ratio`: trace timestamps are divided by it. */
  synthesisSpeedupRatio: option(positive.default(1), {
    flag: 'synthesis-speedup-ratio',
    unit: 'x',
    help: 'divide trace timestamps by x',
  }),
  ...synthesisFields,
};

/** Load generator, stop condition, warmup, cancellation and goodput options. */
export const loadFields = {
  /** `--concurrency`: session-slot ceiling (with a fixed schedule: an optional cap); a list is a sweep. */
  concurrency: option(int(1).optional(), {
    flag: 'concurrency',
    unit: 'n[,n…]',
    help: 'concurrent sessions; a list runs a sweep',
    defaultText: '1 without --request-rate',
    list: true,
  }),
  /** `--request-rate`, requests/s (open loop); a list is a sweep. */
  requestRate: option(positive.optional(), {
    flag: 'request-rate',
    unit: 'r[,r…]',
    help: 'requests/s (open loop); a list runs a sweep',
    list: true,
  }),
  /** `--arrival-pattern`: inter-arrival distribution of `--request-rate`. */
  arrivalPattern: option(z.enum(ARRIVAL_PATTERNS).optional(), {
    flag: 'arrival-pattern',
    unit: 'p',
    help: 'inter-arrival distribution (needs --request-rate)',
    defaultText: 'poisson',
  }),
  /** `--arrival-smoothness`: gamma shape (1 = Poisson). */
  arrivalSmoothness: option(positive.optional(), {
    flag: 'arrival-smoothness',
    unit: 'k',
    help: 'gamma shape (1 = Poisson; needs --arrival-pattern gamma)',
  }),
  /** `--request-count`: stop issuing after this many requests. */
  requestCount: option(int(1).optional(), {
    flag: 'request-count',
    unit: 'n',
    help: 'stop after this many requests',
    defaultText: 'the trace once; synthetic max(10, 2 × concurrency)',
  }),
  /** `--benchmark-duration`, s: stop issuing after this long. */
  benchmarkDurationSeconds: option(positive.optional(), {
    flag: 'benchmark-duration',
    unit: 's',
    help: 'stop issuing after this many seconds',
  }),
  /** `--benchmark-grace-period`, s: wait this long for in-flight requests at a stop. */
  gracePeriodSeconds: option(z.number().min(0).default(30), {
    flag: 'benchmark-grace-period',
    unit: 's',
    help: 'wait this long for in-flight requests at a stop',
    valueHint: 'AIPerf’s `inf` is not taken: give a large number of seconds.',
  }),
  /** `--concurrency-ramp-duration`, s. */
  concurrencyRampSeconds: option(positive.optional(), {
    flag: 'concurrency-ramp-duration',
    unit: 's',
    help: 'open the concurrency slots over this time',
  }),
  /** `--request-rate-ramp-duration`, s. */
  requestRateRampSeconds: option(positive.optional(), {
    flag: 'request-rate-ramp-duration',
    unit: 's',
    help: 'raise the rate linearly over this time',
  }),
  /** `--warmup-request-count`: warmup requests before profiling (not in the metrics). */
  warmupRequestCount: option(int(1).optional(), {
    flag: 'warmup-request-count',
    unit: 'n',
    help: 'warmup requests before profiling (not in the metrics)',
  }),
  /** `--warmup-duration`, s. */
  warmupDurationSeconds: option(positive.optional(), {
    flag: 'warmup-duration',
    unit: 's',
    help: 'warmup time before profiling',
  }),
  /** `--request-cancellation-rate`: percent of requests the client cancels (0–100). */
  requestCancellationRatePct: option(z.number().min(0).max(100).optional(), {
    flag: 'request-cancellation-rate',
    unit: 'pct',
    help: 'percent of requests the client cancels',
  }),
  /** `--request-cancellation-delay`, s after sending (needs a cancellation rate). */
  requestCancellationDelaySeconds: option(z.number().min(0).optional(), {
    flag: 'request-cancellation-delay',
    unit: 's',
    help: 'cancel this long after sending (needs --request-cancellation-rate)',
    defaultText: '0',
  }),
  /** `--goodput` SLOs, e.g. `time_to_first_token:300 inter_token_latency:20` (ms). */
  goodput: option(z.string().optional(), {
    flag: 'goodput',
    unit: 'slos',
    help: 'SLOs, e.g. "time_to_first_token:300 inter_token_latency:20" (ms)',
  }),
  ...shardFields,
};

/** Output, simulator and client options. */
export const outputFields = {
  /** `--artifact-dir`: output folder (default `artifacts/<model>-openai-<endpoint>-<stimulus>`). */
  artifactDir: option(z.string().min(1).optional(), {
    flag: 'artifact-dir',
    unit: 'dir',
    help: 'output folder',
    defaultText: 'artifacts/<run name>',
  }),
  /** `--simulator`: start the built-in simulator in a child process and target it instead of `--url`. */
  simulator: option(z.boolean().default(false), {
    flag: 'simulator',
    help: 'start the built-in simulator and profile it instead of --url',
  }),
  /** `--simulator-option name=value`: the built-in simulator's parameters (its option names). */
  simulatorOptions: option(z.record(z.string(), z.unknown()).transform(camelKeys).default({}), {
    flag: 'simulator-option',
    unit: 'name=value',
    help: 'built-in simulator parameter (see `tokenload simulate --help`, camelCase or kebab-case); repeatable',
    parse: (v, prev) => simulatorOption(v, prev as Record<string, unknown> | undefined),
    repeatable: true,
  }),
  /** `--timing-precision`: `timer` (a helper thread wakes the loop early) or `spin` (polls). */
  timingPrecision: option(z.enum(['timer', 'spin']).default('timer'), {
    flag: 'timing-precision',
    unit: 'mode',
    help: 'timer: a helper thread wakes the loop 0.2 ms early, the last 0.2 ms is polled; spin: poll the last 1.5 ms before every send (costs a busy core)',
  }),
  /** `--client-warmup-ms`: exercise the client against an in-process simulator first, ms; 0 = off. */
  clientWarmupMs: option(int(0).default(500), {
    flag: 'client-warmup-ms',
    unit: 'ms',
    help: 'before the run, exercise this client against an in-process simulator for this long, so the first requests are not sent and read by cold code; nothing reaches --url (0 = off)',
  }),
  /** `--prewarm-connections`: connections to the target opened before the first request; auto when absent. */
  prewarmConnections: option(
    z.union([int(0), z.literal('auto')], { error: 'expected a whole number >= 0 or auto' }).optional(),
    {
      flag: 'prewarm-connections',
      unit: 'n|auto',
      parse: (text) => (text === 'auto' ? 'auto' : (plainNumber(text, true) ?? text)),
      help: 'open this many keep-alive connections to --url before the first measured request, so the first seconds do not pay a handshake per request (no HTTP request is sent; 0 = off)',
      defaultText:
        "auto: --concurrency, or --request-rate × 1 s, or a fixed schedule's busiest second (64 for a streamed trace); at most 256",
    },
  ),
  /** `--workers`: client worker threads, each with its own connection pool; 1 = single-process. */
  workers: option(int(1).optional(), {
    flag: 'workers',
    unit: 'n',
    help: 'client worker threads, each with its own connection pool',
    defaultText: '1 (single-process)',
  }),
  /** `--ui`: progress output; `dashboard` is the live bar, as `simple`. */
  ui: option(z.enum(['none', 'simple', 'dashboard']).default('simple'), {
    flag: 'ui',
    unit: 'mode',
    help: 'progress output (dashboard = the live bar, as simple)',
  }),
  ...serverMetricsFields,
  /** The command line as typed, for the console footer (library callers: a placeholder). */
  commandLine: option(z.string().default('(library call)'), {
    flag: 'command-line',
    help: 'the command line as typed',
    internal: true,
  }),
};
