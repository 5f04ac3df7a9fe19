/**
 * The metric registry: every metric tokenload reports, keyed by its AIPerf tag. Artifacts, goodput
 * parsing and the console all read this one map; nothing registers itself by import side effect.
 */
import { RECORD_METRIC_DEFS } from '../record/record-metrics.js';
import {
  cancelledRequestCount,
  errorRequestCount,
  goodRequestCount,
  oslMismatchCount,
  requestCount,
  totalErrorIsl,
  totalIsl,
  totalOsl,
  usageDiscrepancyCount,
} from './defs/counts.js';
import {
  benchmarkDuration,
  goodput,
  goodRequestFraction,
  inputTokenThroughput,
  outputTokenThroughput,
  requestThroughput,
  totalTokenThroughput,
} from './defs/throughput.js';
import type { MetricDef, RunMetricDef } from './types.js';

/**
 * All metrics by tag. Record metrics first, in computation order (the record stage's
 * `RECORD_METRIC_DEFS`); then aggregates and derived.
 */
export const METRICS = {
  ...RECORD_METRIC_DEFS,
  request_count: requestCount,
  error_request_count: errorRequestCount,
  cancelled_request_count: cancelledRequestCount,
  total_isl: totalIsl,
  total_osl: totalOsl,
  total_error_isl: totalErrorIsl,
  usage_discrepancy_count: usageDiscrepancyCount,
  osl_mismatch_count: oslMismatchCount,
  good_request_count: goodRequestCount,
  benchmark_duration: benchmarkDuration,
  output_token_throughput: outputTokenThroughput,
  input_token_throughput: inputTokenThroughput,
  total_token_throughput: totalTokenThroughput,
  request_throughput: requestThroughput,
  goodput,
  good_request_fraction: goodRequestFraction,
} as const satisfies Record<string, MetricDef>;

/** A metric tag tokenload knows. */
export type MetricTag = keyof typeof METRICS;

const ALL: readonly MetricDef[] = Object.values(METRICS);

/** Aggregate and derived metric definitions, in registry order. */
export const RUN_METRICS: readonly RunMetricDef[] = ALL.filter((m): m is RunMetricDef => m.kind !== 'record');

/** The definition of `tag`, or undefined for an unknown tag. */
export function metricByTag(tag: string): MetricDef | undefined {
  return Object.hasOwn(METRICS, tag) ? METRICS[tag as MetricTag] : undefined;
}
