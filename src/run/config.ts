/**
 * The resolved configuration of one `tokenload profile` run, after CLI parsing and validation.
 * Field names follow the AIPerf flags they come from; units are in the names.
 */
import type { ContextMode } from '../dataset/types.js';
import type { ArrivalPattern } from '../timing/arrivals.js';
import type { TimingPrecision } from '../timing/real-clock.js';

/** Everything a profile run needs. */
export interface ProfileConfig {
  /** `-m/--model`: one or more model names; requests round-robin over them. */
  models: string[];
  /** `-u/--url`: server origin, `http://` implied (AIPerf default `localhost:8000`). */
  url: string;
  /** `--endpoint-type`. */
  endpointType: string;
  /** `--endpoint`: URL path override. */
  endpointPath?: string;
  /** `--streaming`. */
  streaming: boolean;
  /** `--input-file`; absent for a synthetic dataset. */
  inputFile?: string;
  /** `--custom-dataset-type` (required with `--input-file`). */
  customDatasetType?: string;
  /** Synthetic dataset options (`--isl`, `--osl`, …) used when there is no input file. */
  synthetic?: Record<string, unknown>;
  /** `--request-rate`, requests/s (open loop). */
  requestRate?: number;
  /** `--arrival-pattern` (default poisson, as AIPerf). */
  arrivalPattern?: ArrivalPattern;
  /** `--arrival-smoothness`: gamma shape. */
  arrivalSmoothness?: number;
  /** `--request-count`: stop issuing after this many requests. */
  requestCount?: number;
  /** `--benchmark-duration`, s: stop issuing after this long. */
  benchmarkDurationSeconds?: number;
  /** `--concurrency-ramp-duration`, s. */
  concurrencyRampSeconds?: number;
  /** `--request-rate-ramp-duration`, s. */
  requestRateRampSeconds?: number;
  /** `--warmup-request-count`. */
  warmupRequestCount?: number;
  /** `--warmup-duration`, s. */
  warmupDurationSeconds?: number;
  /** `--dataset-sampling-strategy`. */
  datasetSamplingStrategy?: 'sequential' | 'random' | 'shuffle';
  /** `--conversation-context-mode`: overrides the dataset type's mode. */
  contextModeOverride?: ContextMode;
  /** `--request-cancellation-rate`, percent of requests cancelled by the client (0–100). */
  requestCancellationRatePct?: number;
  /** `--request-cancellation-delay`, s after the request was sent. */
  requestCancellationDelaySeconds?: number;
  /** `--fixed-schedule` (also implied by a timestamped trace type). */
  fixedSchedule: boolean;
  /** `--fixed-schedule-auto-offset` (default true here; AIPerf's default is false). */
  fixedScheduleAutoOffset: boolean;
  /** `--fixed-schedule-start-offset`, trace ms, inclusive. */
  fixedScheduleStartOffsetMs?: number;
  /** `--fixed-schedule-end-offset`, trace ms, inclusive. */
  fixedScheduleEndOffsetMs?: number;
  /** `--synthesis-speedup-ratio`: trace timestamps are divided by it. */
  synthesisSpeedupRatio: number;
  /** `--isl-block-size`: tokens per hash id (default from the dataset type). */
  islBlockSize?: number;
  /** `--tokenizer`: `builtin:qwen3`, a model folder, or a tokenizer.json path. */
  tokenizer: string;
  /** `--random-seed` (a random seed is drawn and recorded when not given). */
  randomSeed: number;
  /** `--request-timeout-seconds`. */
  requestTimeoutSeconds: number;
  /** `--extra-inputs`, merged into every body. */
  extraInputs: Record<string, unknown>;
  /** `-H/--header` values, name → value. */
  headers: Record<string, string>;
  /** `--api-key`, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** `--use-legacy-max-tokens`. */
  useLegacyMaxTokens: boolean;
  /** `--use-server-token-count`. */
  useServerTokenCount: boolean;
  /** `--per-chunk-usage`. */
  perChunkUsage: boolean;
  /** `--goodput` SLO string, e.g. `time_to_first_token:300 inter_token_latency:20`. */
  goodput?: string;
  /** `--concurrency`: session-slot ceiling (with a fixed schedule: optional cap). */
  concurrency?: number;
  /** Resolved artifact directory. */
  artifactDir: string;
  /** `--simulator`: start the built-in simulator in a child process and target it. */
  simulator: boolean;
  /** `--simulator-option name=value` pairs for the built-in simulator (its option names). */
  simulatorOptions?: Record<string, unknown>;
  /** `--skip-bad-lines`: count and skip malformed trace lines instead of failing. */
  skipBadLines: boolean;
  /**
   * `--trace-streaming` (default on): a fixed-schedule replay of a streamable trace (Bailian,
   * Mooncake) reads the file while it replays instead of loading it whole first. Off: the whole
   * file is read and validated before the first request (AIPerf's behaviour).
   */
  traceStreaming: boolean;
  /** `--timing-precision`. */
  timingPrecision: TimingPrecision;
  /**
   * `--client-warmup-ms`: before the run, exercise this process's request path for this long against
   * an in-process simulator (nothing is sent to the target), ms; 0 = off.
   */
  clientWarmupMs: number;
  /** `--workers`: client worker threads (each with its own connection pool); ≤ 1 = single-process. */
  workers?: number;
  /** `--benchmark-grace-period` after Ctrl-C / duration end before in-flight requests are cancelled, s. */
  gracePeriodSeconds: number;
  /** `--ui`: `none` | `simple`. */
  ui: 'none' | 'simple';
  /** The command line as typed, for the console footer. */
  commandLine: string;
}

/** The fields every configuration needs, with AIPerf's defaults (and ours: auto-offset on). */
export const PROFILE_DEFAULTS = {
  url: 'http://localhost:8000',
  endpointType: 'chat',
  streaming: false,
  fixedSchedule: false,
  fixedScheduleAutoOffset: true,
  synthesisSpeedupRatio: 1,
  tokenizer: 'builtin:qwen3',
  requestTimeoutSeconds: 21600,
  extraInputs: {},
  headers: {},
  useLegacyMaxTokens: false,
  useServerTokenCount: false,
  perChunkUsage: false,
  artifactDir: 'artifacts/run',
  simulator: false,
  skipBadLines: false,
  traceStreaming: true,
  timingPrecision: 'timer',
  clientWarmupMs: 500,
  gracePeriodSeconds: 30,
  ui: 'none',
  commandLine: '(library call)',
} as const satisfies Partial<ProfileConfig>;

/**
 * A complete {@link ProfileConfig} for library callers: {@link PROFILE_DEFAULTS} overlaid with
 * `overrides`. `models` and `randomSeed` are required because they have no sensible default.
 */
export function profileConfig(
  overrides: Partial<ProfileConfig> & Pick<ProfileConfig, 'models' | 'randomSeed'>,
): ProfileConfig {
  return { ...PROFILE_DEFAULTS, extraInputs: {}, headers: {}, ...overrides };
}
