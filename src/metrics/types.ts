/**
 * Metric definition shapes. Every metric is a plain object in the typed registry
 * (`metrics/registry.ts`); tags, headers, units and formulas follow the AIPerf metric reference
 * (AIPerf's `docs/metrics_reference.md` in github.com/ai-dynamo/aiperf, and its metric classes under
 * `aiperf/metrics/types/`).
 *
 * Values are always in display units: ms for times, tokens for counts of tokens, `sec` for the
 * benchmark duration, per-second rates for throughputs.
 */
import type { TokenCounts } from '../record/tokens.js';
import type { RawRecord } from '../record/types.js';

/** record = one value per request; aggregate = folded over records; derived = computed from aggregates. */
export type MetricKind = 'record' | 'aggregate' | 'derived';

/** Display unit strings, as they appear in the JSON, CSV and console output. */
export type MetricUnit =
  | 'ms'
  | 'sec'
  | 'tokens'
  | 'tokens/sec'
  | 'tokens/sec/user'
  | 'requests'
  | 'requests/sec'
  | 'ratio'
  | '%';

/** Behaviour switches of a metric (AIPerf `MetricFlags` subset). All default to false. */
export interface MetricFlags {
  /** Only computed when the run streams (TTFT, ITL, …). */
  streamingOnly?: boolean;
  /** Bigger values are better (throughputs); goodput SLOs then require `value >= threshold`. */
  largerIsBetter?: boolean;
  /** Hidden from the console table (still in JSON, CSV and JSONL). */
  noConsole?: boolean;
  /** Computed only for failed records (error_isl); hidden from the console and the CSV. */
  errorOnly?: boolean;
}

/** Fields every metric definition has. */
export interface MetricBase {
  /** AIPerf tag: the key in every artifact. */
  tag: string;
  /** Human header, used as `Header (unit)` in tables. */
  header: string;
  unit: MetricUnit;
  flags: MetricFlags;
  /** Ascending sort key of console rows. */
  displayOrder: number;
}

/** What a per-record metric sees: the raw record (with chunks) and its token counts. */
export interface RecordMetricInput {
  raw: RawRecord;
  tokens: TokenCounts;
  streaming: boolean;
}

/** A per-request metric. `compute` returns undefined when the value does not exist for this record. */
export interface RecordMetricDef extends MetricBase {
  kind: 'record';
  compute(input: RecordMetricInput): number | number[] | undefined;
}

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
  usageDiscrepancyCount: number;
  oslMismatchCount: number;
  /** Valid records that ended with `finish_reason: "length"` and no visible (non-reasoning) output. */
  lengthWithoutOutputCount: number;
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
