/**
 * Shapes of a metric definition, and of a per-record one. Per-record metrics are computed by the
 * record stage (record-metrics.ts), so their shapes live on the record side; the metrics stage
 * (`src/metrics`) folds them into run statistics and adds its aggregate and derived metrics. Tags,
 * headers, units and formulas follow the AIPerf metric reference (`docs/metrics_reference.md`, and
 * the metric classes under `aiperf/metrics/types/`).
 *
 * Values are always in display units: ms for times, tokens for counts of tokens, `sec` for the
 * benchmark duration, per-second rates for throughputs.
 */
import type { TokenCounts } from './tokens.js';
import type { RawRecord } from './types.js';

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
  /**
   * Computed for every record, failed ones included: a property of how the request was sent, not of
   * its answer (schedule_lag, client_lag, connection_wait, connect_time).
   */
  everyRecord?: boolean;
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
  /** `--per-chunk-usage`: ITL may divide by OSL − (first chunk's running completion tokens). */
  perChunkUsage: boolean;
}

/** A per-request metric. `compute` returns undefined when the value does not exist for this record. */
export interface RecordMetricDef extends MetricBase {
  kind: 'record';
  compute(input: RecordMetricInput): number | number[] | undefined;
}
