/**
 * The metric registry: every metric tokenload reports, keyed by its AIPerf tag. Artifacts, goodput
 * parsing and the console all read this one map; nothing registers itself by import side effect.
 */
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
  interChunkLatency,
  interTokenLatency,
  outputTokenThroughputPerUser,
  requestLatency,
  timeToFirstOutputToken,
  timeToFirstToken,
  timeToSecondToken,
} from './defs/latency.js';
import { scheduleLag } from './defs/schedule.js';
import {
  benchmarkDuration,
  goodput,
  goodRequestFraction,
  inputTokenThroughput,
  outputTokenThroughput,
  requestThroughput,
  totalTokenThroughput,
} from './defs/throughput.js';
import {
  errorIsl,
  inputSequenceLength,
  outputSequenceLength,
  outputTokenCount,
  reasoningTokenCount,
} from './defs/tokens.js';
import {
  oslMismatchDiffPct,
  usageCachedTokens,
  usageCompletionTokens,
  usageCompletionTokensDiffPct,
  usagePromptTokens,
  usagePromptTokensDiffPct,
  usageReasoningTokens,
} from './defs/usage.js';
import type { MetricDef, RecordMetricDef, RunMetricDef } from './types.js';

/** All metrics by tag. Record metrics first, in computation order; then aggregates and derived. */
export const METRICS = {
  time_to_first_token: timeToFirstToken,
  time_to_second_token: timeToSecondToken,
  time_to_first_output_token: timeToFirstOutputToken,
  request_latency: requestLatency,
  inter_token_latency: interTokenLatency,
  inter_chunk_latency: interChunkLatency,
  output_token_throughput_per_user: outputTokenThroughputPerUser,
  input_sequence_length: inputSequenceLength,
  output_sequence_length: outputSequenceLength,
  reasoning_token_count: reasoningTokenCount,
  output_token_count: outputTokenCount,
  usage_prompt_tokens: usagePromptTokens,
  usage_completion_tokens: usageCompletionTokens,
  usage_cached_tokens: usageCachedTokens,
  usage_reasoning_tokens: usageReasoningTokens,
  usage_prompt_tokens_diff_pct: usagePromptTokensDiffPct,
  usage_completion_tokens_diff_pct: usageCompletionTokensDiffPct,
  osl_mismatch_diff_pct: oslMismatchDiffPct,
  schedule_lag: scheduleLag,
  error_isl: errorIsl,
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

/** Per-record metric definitions, in registry order. */
export const RECORD_METRICS: readonly RecordMetricDef[] = ALL.filter(
  (m): m is RecordMetricDef => m.kind === 'record',
);

/** Aggregate and derived metric definitions, in registry order. */
export const RUN_METRICS: readonly RunMetricDef[] = ALL.filter((m): m is RunMetricDef => m.kind !== 'record');

/** The definition of `tag`, or undefined for an unknown tag. */
export function metricByTag(tag: string): MetricDef | undefined {
  return Object.hasOwn(METRICS, tag) ? METRICS[tag as MetricTag] : undefined;
}
