/**
 * The per-record metrics, keyed by AIPerf tag in computation order, and their computation for one
 * request. The metrics stage's registry (`metrics/registry.ts`) lists these first, then its own
 * aggregate and derived metrics.
 */
import {
  errorTimeToFirstToken,
  interChunkLatency,
  interTokenLatency,
  outputTokenThroughputPerUser,
  requestLatency,
  requestLatencyFromSchedule,
  timeToFirstOutputToken,
  timeToFirstToken,
  timeToFirstTokenFromSchedule,
  timeToSecondToken,
} from './metric-defs/latency.js';
import {
  clientLag,
  concurrencyWait,
  connectionWait,
  connectTime,
  prefillWait,
  scheduleLag,
} from './metric-defs/schedule.js';
import {
  clientOverhead,
  serverCachedTokens,
  serverDecode,
  serverMeanItl,
  serverPrefill,
  serverQueue,
  serverTtft,
} from './metric-defs/server-timing.js';
import {
  errorIsl,
  inputSequenceLength,
  inputTemplatedTokens,
  inputTextTokens,
  outputSequenceLength,
  outputTokenCount,
  reasoningTokenCount,
  turnInputSequenceLength,
} from './metric-defs/tokens.js';
import {
  idealCachedTokens,
  oslMismatchDiffPct,
  usageCachedTokens,
  usageCompletionTokens,
  usageCompletionTokensDiffPct,
  usagePromptTokens,
  usagePromptTokensDiffPct,
  usageReasoningTokens,
} from './metric-defs/usage.js';
import type { RecordMetricDef, RecordMetricInput } from './metric-types.js';
import type { RecordMetrics } from './types.js';

/** Every per-record metric by tag, in computation order. */
export const RECORD_METRIC_DEFS = {
  time_to_first_token: timeToFirstToken,
  time_to_second_token: timeToSecondToken,
  time_to_first_output_token: timeToFirstOutputToken,
  request_latency: requestLatency,
  time_to_first_token_from_schedule: timeToFirstTokenFromSchedule,
  request_latency_from_schedule: requestLatencyFromSchedule,
  inter_token_latency: interTokenLatency,
  inter_chunk_latency: interChunkLatency,
  output_token_throughput_per_user: outputTokenThroughputPerUser,
  input_sequence_length: inputSequenceLength,
  turn_input_sequence_length: turnInputSequenceLength,
  input_text_tokens: inputTextTokens,
  input_templated_tokens: inputTemplatedTokens,
  output_sequence_length: outputSequenceLength,
  reasoning_token_count: reasoningTokenCount,
  output_token_count: outputTokenCount,
  usage_prompt_tokens: usagePromptTokens,
  usage_completion_tokens: usageCompletionTokens,
  usage_cached_tokens: usageCachedTokens,
  ideal_cached_tokens: idealCachedTokens,
  usage_reasoning_tokens: usageReasoningTokens,
  usage_prompt_tokens_diff_pct: usagePromptTokensDiffPct,
  usage_completion_tokens_diff_pct: usageCompletionTokensDiffPct,
  osl_mismatch_diff_pct: oslMismatchDiffPct,
  schedule_lag: scheduleLag,
  client_lag: clientLag,
  connection_wait: connectionWait,
  connect_time: connectTime,
  prefill_wait: prefillWait,
  concurrency_wait: concurrencyWait,
  error_isl: errorIsl,
  error_time_to_first_token: errorTimeToFirstToken,
  server_ttft_ms: serverTtft,
  server_queue_ms: serverQueue,
  server_prefill_ms: serverPrefill,
  server_decode_ms: serverDecode,
  server_mean_itl_ms: serverMeanItl,
  server_cached_tokens: serverCachedTokens,
  client_overhead_ms: clientOverhead,
} as const satisfies Record<string, RecordMetricDef>;

/** Per-record metric definitions, in computation order. */
export const RECORD_METRICS: readonly RecordMetricDef[] = Object.values(RECORD_METRIC_DEFS);

function applies(def: RecordMetricDef, input: RecordMetricInput, valid: boolean): boolean {
  if (def.flags.errorOnly === true) return !valid;
  if (def.flags.everyRecord === true) return true;
  if (!valid) return false;
  return def.flags.streamingOnly !== true || input.streaming;
}

/**
 * Metric values of one record, keyed by tag, in display units. A valid record gets every record
 * metric that exists for it (stream-only ones only when streaming); a failed record gets only the
 * error-only metrics (error_isl) and the every-record ones (how it was sent: schedule_lag, …).
 * Metrics whose value does not exist are absent, never 0.
 */
export function computeRecordMetrics(input: RecordMetricInput, valid: boolean): RecordMetrics {
  const metrics: RecordMetrics = {};
  for (const def of RECORD_METRICS) {
    if (!applies(def, input, valid)) continue;
    const value = def.compute(input);
    if (value !== undefined) metrics[def.tag] = value;
  }
  return metrics;
}
