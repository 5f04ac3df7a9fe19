/**
 * `profile_export_aiperf.json`: the run summary, one top-level key per metric tag (AIPerf summary
 * JSON layout), plus run information, the redacted input config, the error summary and warnings.
 */
import type { ErrorSummaryEntry } from '../metrics/error-summary.js';
import type { MetricSummary, Summary } from '../metrics/summary.js';
import { packageVersion } from '../util/package-root.js';
import { redactConfig } from '../util/redact.js';

/** Default file name of the summary JSON. */
export const SUMMARY_JSON_FILE_NAME = 'profile_export_aiperf.json';

/** Version of the layout below; bump on any incompatible change. */
export const SUMMARY_SCHEMA_VERSION = '1.0';

/** The summary's `run_status`: how the run ended (decided by ./run-status.ts). */
export interface RunStatus {
  /**
   * `completed`: the run ran to its end and at least one request succeeded; `failed`: no request
   * succeeded, or the run stopped on an error (a bad trace row, a tokenizer, a crash); `interrupted`:
   * Ctrl-C or SIGTERM stopped it; `partial`: `tokenload merge --allow-partial` of shards with some
   * missing or unfinished (the reason names them).
   */
  status: 'completed' | 'failed' | 'interrupted' | 'partial';
  /** Why it failed or stopped, one line; null for a completed run. */
  reason: string | null;
  /** The exit code `tokenload profile` gives for this run. */
  exit_code: number;
}

/** What the summary exporters need besides the {@link Summary}. */
export interface SummaryExportContext {
  summary: Summary;
  /** Resolved run configuration; secrets are redacted before writing. */
  inputConfig: Record<string, unknown>;
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
  tokenload_version: string;
  start_time: string;
  end_time: string;
  was_cancelled: boolean;
  input_config: unknown;
  error_summary: ErrorSummaryEntry[];
  warnings: string[];
  [tag: string]: MetricSummary | unknown;
}

/**
 * Builds the summary JSON object: `schema_version`, `tokenload_version`, `start_time`/`end_time`
 * (ISO 8601), `was_cancelled`, `run_status`, then each metric tag → `{unit, avg, min, max, p1…p99, std, count}` for
 * per-record metrics or `{unit, avg}` for run-level ones, then `input_config` (redacted),
 * `error_summary` (`[{code, type, message, count}]`), `warnings`, `usage_check` and `cache_check`
 * (when they have something to say; metrics/usage-check.ts, metrics/cache-check.ts).
 */
export function buildSummaryJson(ctx: SummaryExportContext): SummaryJson {
  return {
    schema_version: SUMMARY_SCHEMA_VERSION,
    tokenload_version: ctx.version ?? packageVersion(),
    start_time: ctx.startTime.toISOString(),
    end_time: ctx.endTime.toISOString(),
    was_cancelled: ctx.wasCancelled,
    ...(ctx.runStatus === undefined ? {} : { run_status: ctx.runStatus }),
    ...ctx.summary.metrics,
    input_config: redactConfig(ctx.inputConfig),
    error_summary: ctx.summary.errorSummary,
    warnings: ctx.summary.warnings,
    ...(ctx.summary.usageCheck === null ? {} : { usage_check: ctx.summary.usageCheck }),
    ...(ctx.summary.cacheCheck === null ? {} : { cache_check: ctx.summary.cacheCheck }),
    ...(ctx.extra ?? {}),
  };
}

/** The summary JSON text (2-space indent, trailing newline). */
export function renderSummaryJson(ctx: SummaryExportContext): string {
  return `${JSON.stringify(buildSummaryJson(ctx), null, 2)}\n`;
}
