/**
 * Computes the per-record metrics of one request from the registry.
 */
import type { RecordMetrics } from '../record/types.js';
import { RECORD_METRICS } from './registry.js';
import type { RecordMetricDef, RecordMetricInput } from './types.js';

function applies(def: RecordMetricDef, input: RecordMetricInput, valid: boolean): boolean {
  if (def.flags.errorOnly === true) return !valid;
  if (!valid) return false;
  return def.flags.streamingOnly !== true || input.streaming;
}

/**
 * Metric values of one record, keyed by tag, in display units. A valid record gets every record
 * metric that exists for it (stream-only ones only when streaming); a failed record gets only the
 * error-only metrics (error_isl). Metrics whose value does not exist are absent, never 0.
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
