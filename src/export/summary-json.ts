/**
 * `profile_export_aiperf.json`: the run summary, one top-level key per metric tag (AIPerf summary
 * JSON layout), plus run information, the redacted input config, the error summary and warnings.
 * The provenance keys are AIPerf's (its docs/reference/json-export-schema.md): `schema_version`,
 * `aiperf_version`, `benchmark_id`, `run_info`, and `input_config` in AIPerf's nested layout;
 * tokenload's own flat configuration is `tokenload_config`.
 */
import { randomUUID } from 'node:crypto';
import type { ErrorSummaryEntry } from '../metrics/error-summary.js';
import type { MetricSummary, Summary } from '../metrics/summary.js';
import { packageVersion } from '../util/package-root.js';
import { redactConfig } from '../util/redact.js';
import type { RunLabels } from '../util/run-env.js';

/** Default file name of the summary JSON. */
export const SUMMARY_JSON_FILE_NAME = 'profile_export_aiperf.json';

/**
 * AIPerf's `profile_export_aiperf.json` schema version this file follows (the newest in AIPerf's
 * json-export-schema.md: 1.5). Of what 1.4 and 1.5 added, tokenload writes `warmup_metrics` when a
 * run has a warmup phase and never `telemetry_data` (no GPU telemetry), so a 1.5 reader finds every
 * key it reads where it looks.
 */
export const SUMMARY_SCHEMA_VERSION = '1.5';

/**
 * The summary's `aiperf_version`: AIPerf's key for the program that wrote the file. No AIPerf wrote
 * it, so it names tokenload (`tokenload-<version>`) rather than claim an AIPerf release; the
 * compatible layout is `schema_version`, tokenload's bare version `tokenload_version`.
 */
export function aiperfVersionValue(version: string): string {
  return `tokenload-${version}`;
}

/** The summary's `run_info` (AIPerf schema 1.3): what reproduces the run from this file alone. */
export interface RunInfo {
  /** The same UUID as the top-level `benchmark_id`. */
  benchmark_id: string;
  sweep_id: string | null;
  /** The run's resolved `--random-seed`. */
  random_seed: number | null;
  trial: number;
  run_label: string;
  variation_label: string;
  variation_index: number;
  variation_values: Record<string, number>;
  /** The command line as typed, secrets redacted; null for a library call. */
  cli_command: string | null;
}

/**
 * The `run_info` of a run: a new UUID as `benchmark_id`, and its place among the command's runs
 * (`labels`; a lone run is trial 0, `run_0001`, variation `base` with no values).
 */
export function runInfoOf(
  labels: RunLabels | undefined,
  randomSeed: number | null,
  cliCommand: string | null,
): RunInfo {
  return {
    benchmark_id: randomUUID(),
    sweep_id: labels?.sweepId ?? null,
    random_seed: randomSeed,
    trial: labels?.trial ?? 0,
    run_label: labels?.runLabel ?? 'run_0001',
    variation_label: labels?.variationLabel ?? 'base',
    variation_index: labels?.variationIndex ?? 0,
    variation_values: labels?.variationValues ?? {},
    cli_command: cliCommand,
  };
}

/** The summary's `run_status`: how the run ended (decided by ./run-status.ts). */
export interface RunStatus {
  /**
   * `completed`: the run ran to its end and at least one request succeeded; `failed`: no request
   * succeeded, or the run stopped on an error (a bad trace row, a tokenizer, a crash); `interrupted`:
   * Ctrl-C or SIGTERM stopped it; `partial`: `tokenload merge --allow-partial` of shards with some
   * missing or unfinished (the reason names them); `failed_request_threshold`: more than
   * `--failed-request-threshold` of its requests failed, so it stopped issuing (the reason gives the
   * counts and when).
   */
  status: 'completed' | 'failed' | 'interrupted' | 'partial' | 'failed_request_threshold';
  /** Why it failed or stopped, one line; null for a completed run. */
  reason: string | null;
  /** The exit code `tokenload profile` gives for this run. */
  exit_code: number;
}

/** What the summary exporters need besides the {@link Summary}. */
export interface SummaryExportContext {
  summary: Summary;
  /** Resolved run configuration (tokenload's flat keys), written as `tokenload_config`; secrets are redacted before writing. */
  inputConfig: Record<string, unknown>;
  /** The same in AIPerf's nested layout (config/aiperf-layout.ts), written as `input_config`; redacted before writing. */
  aiperfInputConfig: Record<string, unknown>;
  /** The run's `run_info`; a lone run's with a new `benchmark_id` when absent. */
  runInfo?: RunInfo;
  /** Wall-clock start and end of the profiling phase. */
  startTime: Date;
  endTime: Date;
  /** True when the run was interrupted (Ctrl-C) before all requests finished. */
  wasCancelled: boolean;
  /** How the run ended, written as `run_status` right after `was_cancelled`; omitted when not given. */
  runStatus?: RunStatus;
  /** tokenload version; defaults to package.json's. */
  version?: string;
  /** Extra top-level sections (e.g. `warmup_metrics`, `duration_cutoff`, `client_health`), added last. */
  extra?: Record<string, unknown>;
}

/** Top-level shape of the summary JSON; metric tags are the remaining keys. */
export interface SummaryJson {
  schema_version: string;
  aiperf_version: string;
  tokenload_version: string;
  benchmark_id: string;
  start_time: string;
  end_time: string;
  was_cancelled: boolean;
  input_config: unknown;
  tokenload_config: unknown;
  run_info: RunInfo;
  error_summary: ErrorSummaryEntry[];
  warnings: string[];
  [tag: string]: MetricSummary | unknown;
}

/**
 * Builds the summary JSON object: `schema_version`, `aiperf_version`, `tokenload_version`,
 * `benchmark_id`, `start_time`/`end_time` (ISO 8601), `was_cancelled`, `run_status`, then each
 * metric tag → `{unit, avg, min, max, p1…p99, std, count}` for per-record metrics — then ours,
 * `p999` (from 3,688 values) and `ci95: {p1…p99, p999?: {low, high}}`, each percentile's
 * distribution-free 95 % interval (metrics/percentile-ci.ts) — or `{unit, avg}` for run-level ones, then `input_config` (AIPerf's layout) and `tokenload_config` (redacted),
 * `run_info`, `error_summary` (`[{code, type, message, count}]`), `warnings`, `usage_check` and `cache_check`
 * (when they have something to say; metrics/usage-check.ts, metrics/cache-check.ts), `stream_integrity`
 * (counts of streams and usages that were not what they seemed; metrics/stream-integrity-check.ts).
 */
export function buildSummaryJson(ctx: SummaryExportContext): SummaryJson {
  const version = ctx.version ?? packageVersion();
  const runInfo = ctx.runInfo ?? runInfoOf(undefined, null, null);
  return {
    schema_version: SUMMARY_SCHEMA_VERSION,
    aiperf_version: aiperfVersionValue(version),
    tokenload_version: version,
    benchmark_id: runInfo.benchmark_id,
    start_time: ctx.startTime.toISOString(),
    end_time: ctx.endTime.toISOString(),
    was_cancelled: ctx.wasCancelled,
    ...(ctx.runStatus === undefined ? {} : { run_status: ctx.runStatus }),
    ...ctx.summary.metrics,
    input_config: redactConfig(ctx.aiperfInputConfig),
    tokenload_config: redactConfig(ctx.inputConfig),
    run_info: { ...runInfo, cli_command: redactCli(runInfo.cli_command) },
    error_summary: ctx.summary.errorSummary,
    warnings: ctx.summary.warnings,
    ...(ctx.summary.usageCheck === null ? {} : { usage_check: ctx.summary.usageCheck }),
    ...(ctx.summary.cacheCheck === null ? {} : { cache_check: ctx.summary.cacheCheck }),
    ...(ctx.summary.streamIntegrity === undefined ? {} : { stream_integrity: ctx.summary.streamIntegrity }),
    ...(ctx.extra ?? {}),
  };
}

/** The summary JSON text (2-space indent, trailing newline). */
export function renderSummaryJson(ctx: SummaryExportContext): string {
  return `${JSON.stringify(buildSummaryJson(ctx), null, 2)}\n`;
}

/** The command line with secrets redacted, as the config's (util/redact.ts). */
function redactCli(cli: string | null): string | null {
  return cli === null ? null : (redactConfig({ cli }) as { cli: string }).cli;
}
