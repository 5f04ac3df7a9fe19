/**
 * Public surface of the record stage: raw → processed records, the failure codes, the per-record
 * metrics and the token counting rule.
 */
export { effectiveError, FAILURE_CODES } from './failure.js';
export type { MetricFlags, MetricUnit } from './metric-types.js';
export { type ProcessContext, processRecord } from './process.js';
export { computeRecordMetrics, RECORD_METRICS } from './record-metrics.js';
export { countTokens, type TokenContext, type TokenCounts } from './tokens.js';
