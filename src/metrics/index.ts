/** Public surface of the metrics stage: registry, statistics, goodput SLOs and the run summary. */
export type { CacheCheckSummary } from './cache-check.js';
export type { ErrorSummaryEntry } from './error-summary.js';
export { GoodputParseError, meetsSlos, parseGoodput, type Slo } from './goodput.js';
export { METRICS, type MetricTag, metricByTag, RUN_METRICS } from './registry.js';
export { computeStats, PERCENTILES, percentileSorted, STAT_KEYS, type Stats } from './stats.js';
export {
  isStatsSummary,
  type MetricSummary,
  type ScalarSummary,
  type StatsSummary,
  type SummarizeOptions,
  type Summary,
  summarize,
} from './summary.js';
export type { MetricDef, MetricKind, RunTotals } from './types.js';
export type { UsageCheckSummary, UsageLayoutSummary } from './usage-check.js';
