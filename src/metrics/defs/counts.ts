/**
 * Run-level counts and totals (AIPerf metric reference, "Aggregate Metrics").
 */
import type { MetricUnit } from '../../record/metric-types.js';
import type { RunMetricDef, RunTotals } from '../types.js';

function countMetric(
  tag: string,
  header: string,
  unit: MetricUnit,
  order: number,
  read: (t: RunTotals) => number | undefined,
  noConsole = false,
): RunMetricDef {
  return { tag, header, unit, kind: 'aggregate', flags: { noConsole }, displayOrder: order, compute: read };
}

/** Request Count, requests: valid (successful) records. AIPerf `request_count`. */
export const requestCount = countMetric(
  'request_count',
  'Request Count',
  'requests',
  1100,
  (t) => t.validCount,
);

/** Error Request Count, requests: failed records, cancelled ones included. AIPerf `error_request_count`. */
export const errorRequestCount = countMetric(
  'error_request_count',
  'Error Request Count',
  'requests',
  1110,
  (t) => t.errorCount,
);

/** Cancelled Request Count, requests: records the client cancelled (code 499). AIPerf `cancelled_request_count`. */
export const cancelledRequestCount = countMetric(
  'cancelled_request_count',
  'Cancelled Request Count',
  'requests',
  1120,
  (t) => t.cancelledCount,
);

/** Total Input Sequence Length, tokens: Σ ISL over valid records. AIPerf `total_isl`. */
export const totalIsl = countMetric(
  'total_isl',
  'Total Input Sequence Length',
  'tokens',
  1200,
  (t) => t.totalIsl,
  true,
);

/** Total Output Sequence Length, tokens: Σ OSL over valid records. AIPerf `total_osl`. */
export const totalOsl = countMetric(
  'total_osl',
  'Total Output Sequence Length',
  'tokens',
  1210,
  (t) => t.totalOsl,
  true,
);

/** Total Error ISL, tokens: Σ ISL over failed records. AIPerf `total_error_isl`. */
export const totalErrorIsl = countMetric(
  'total_error_isl',
  'Total Error Input Sequence Length',
  'tokens',
  1220,
  (t) => t.totalErrorIsl,
  true,
);

/**
 * Usage Discrepancy Count, requests: successful requests whose `usage.prompt_tokens` differs from the
 * client count of the prompt sent by more than max(10 %, 8 tokens) after the chat template overhead
 * learned for their message layout (metrics/usage-check.ts). AIPerf `usage_discrepancy_count` counts
 * a raw 10 % difference of the prompt or the completion; the template makes the first fire on every
 * short prompt, and re-tokenized output text is no evidence when the server counted it.
 */
export const usageDiscrepancyCount = countMetric(
  'usage_discrepancy_count',
  'Usage Discrepancy Count',
  'requests',
  1230,
  (t) => t.usageDiscrepancyCount,
  true,
);

/**
 * OSL Mismatch Count, requests: valid records with |OSL − requested| > min(5 % · requested, 50),
 * except a longer OSL counted on the client (no server usage), which is no evidence. AIPerf
 * `osl_mismatch_count` (which counts those too).
 */
export const oslMismatchCount = countMetric(
  'osl_mismatch_count',
  'OSL Mismatch Count',
  'requests',
  1240,
  (t) => t.oslMismatchCount,
  true,
);

/** Good Request Count, requests: valid records meeting every goodput SLO. AIPerf `good_request_count`. */
export const goodRequestCount = countMetric(
  'good_request_count',
  'Good Request Count',
  'requests',
  1010,
  (t) => t.goodCount ?? undefined,
);
