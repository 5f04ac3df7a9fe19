/**
 * Shapes of the summary sections that judge a run (`server_verdict`, `steady_state`,
 * `tails_with_failures`) and of its time slices, as the report reads them back. Every field is
 * checked on reading (summary-analysis.ts); a section that does not fit is treated as absent.
 */

/** `server_verdict` as the run wrote it (metrics/analysis/server-verdict.ts). */
export type { ServerVerdict } from '../metrics/analysis/server-verdict.js';

/** One metric of a window: `{unit, avg}` plus percentiles for per-request metrics. */
export type WindowMetric = { unit: string; avg: number } & Partial<Record<string, number>>;

/** `steady_state.littles_law` as the run wrote it (metrics/analysis/littles-law.ts). */
export type { LittlesLaw } from '../metrics/analysis/littles-law.js';

/** `steady_state`: the window of the run the figures can be trusted in, and the metrics inside it. */
export interface SteadyState {
  /** Window bounds, epoch ns (read as doubles: a few hundred ns off, below what a chart shows). */
  start_ns: number;
  end_ns: number;
  method: string;
  /** The window's share of the run, 0–1. */
  fraction_of_run: number;
  requests: number;
  /** Why the window is the whole run; null when a window was detected. */
  fallback_reason: string | null;
  /** Metrics inside the window, by tag, shaped as the summary's. */
  metrics: Record<string, WindowMetric>;
  littles_law: import('../metrics/analysis/littles-law.js').LittlesLaw | null;
}

/** Percentiles of one metric in `tails_with_failures`; null when it falls among failed requests. */
export type TailPercentiles = { unit: string } & Partial<
  Record<'p50' | 'p90' | 'p95' | 'p99', number | null>
>;

/** `tails_with_failures`: percentiles where each failed or cancelled request counts as worse than any success. */
export interface TailsWithFailures {
  requests: number;
  failed: number;
  cancelled: number;
  /** Requests still in flight at a duration cut-off, counted at their elapsed time. */
  censored: number;
  time_to_first_token: TailPercentiles | null;
  request_latency: TailPercentiles | null;
}

/** One time slice of `profile_export_aiperf_timeslices.json`, on the report's time axis. */
export interface SlicePoint {
  /** Window, s since the run's first request started. */
  startS: number;
  endS: number;
  /** Metrics of the slice, by tag, shaped as the summary's. */
  metrics: Record<string, WindowMetric>;
}
