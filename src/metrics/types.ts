/**
 * Metric definition shapes of the metrics stage: the run-level (aggregate and derived) metrics and
 * the union of every definition. The shared shapes and the per-record ones live with the records
 * that compute them (`record/metric-types.ts`). Tags, headers, units and formulas follow AIPerf's
 * metric reference (`docs/metrics_reference.md` in github.com/ai-dynamo/aiperf).
 */
import type { MetricBase, RecordMetricDef } from '../record/metric-types.js';

/** record = one value per request; aggregate = folded over records; derived = computed from aggregates. */
export type MetricKind = 'record' | 'aggregate' | 'derived';

/**
 * Run-level sums the aggregate and derived metrics are computed from. Built by `metrics/totals.ts`.
 * Token sums are over valid records; the time window is over all records (see `benchmarkDurationSec`).
 */
export interface RunTotals {
  validCount: number;
  /** Failed records, cancelled ones included. */
  errorCount: number;
  cancelledCount: number;
  totalIsl: number;
  totalOsl: number;
  totalErrorIsl: number;
  /** Set when the summary is built: the usage check's discrepant requests (metrics/usage-check.ts). */
  usageDiscrepancyCount: number;
  /**
   * Valid records whose OSL is off the requested max tokens by more than min(5 %, 50 tokens): shorter
   * ones (`oslShortCount`) plus longer ones counted by the server (`oslLongCount`). A longer OSL that
   * the client counted (no server usage) is not one: re-tokenizing the text is no evidence.
   */
  oslMismatchCount: number;
  /** Of {@link RunTotals.oslMismatchCount}: shorter than requested (the server stopped at EOS). */
  oslShortCount: number;
  /** Of {@link RunTotals.oslMismatchCount}: longer by the server's own usage (max tokens ignored). */
  oslLongCount: number;
  /** Valid records that ended with `finish_reason: "length"` and no visible (non-reasoning) output. */
  lengthWithoutOutputCount: number;
  /** Valid records whose ITL fell back to OSL − 1 although `--per-chunk-usage` was given. */
  itlPerChunkFallbackCount: number;
  /**
   * Streamed valid records whose server reported a TTFT (`server_ttft_ms`) longer than the client's
   * own, so they have no `client_overhead_ms` (record/metric-defs/server-timing.ts).
   */
  serverTtftAboveClientCount: number;
  /** Valid records whose server timing had a known field that was not a finite, non-negative number. */
  serverTimingInvalidCount: number;
  /** The first such field seen, `name=value`; null while none. */
  serverTimingInvalidExample: string | null;
  /** Records meeting every goodput SLO; null when no SLOs were given. */
  goodCount: number | null;
  /** Earliest request start, monotonic ns; null with no records. */
  minStartNs: number | null;
  /** Latest response timestamp (last content chunk, else end), monotonic ns; null with no records. */
  maxResponseNs: number | null;
}

/** A run-level metric. `compute` returns undefined when the value does not exist (e.g. zero duration). */
export interface RunMetricDef extends MetricBase {
  kind: 'aggregate' | 'derived';
  compute(totals: RunTotals): number | undefined;
}

/** Any metric definition. */
export type MetricDef = RecordMetricDef | RunMetricDef;
