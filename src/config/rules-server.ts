/** The cross-field rule of the server options (`--wait-for-model-*`). */
import type { ConfigRule } from './rule-types.js';

/** The rule of the wait options: mode and interval mean nothing without a timeout (AIPerf's check). */
export const waitForModelRule: ConfigRule = {
  option: '--wait-for-model-timeout',
  check(c) {
    if ((c.waitForModelTimeoutSeconds ?? 0) > 0) return null;
    const given = [
      c.waitForModelMode === undefined ? null : '--wait-for-model-mode',
      c.waitForModelIntervalSeconds === undefined ? null : '--wait-for-model-interval',
    ].filter((f) => f !== null);
    return given.length === 0
      ? null
      : `${given.join(' and ')} ${given.length === 1 ? 'has' : 'have'} no effect without --wait-for-model-timeout > 0.`;
  },
};

/**
 * The rule of `--server-metrics-formats`: tokenload writes no Parquet, and the formats mean nothing
 * without scraping.
 */
export const serverMetricsFormatsRule: ConfigRule = {
  option: '--server-metrics-formats',
  check(c) {
    const formats = c.serverMetricsFormats;
    if (formats === undefined) return null;
    if (formats.includes('parquet'))
      return "--server-metrics-formats parquet is AIPerf's option; tokenload does not take it: tokenload writes no Parquet; server_metrics_export.jsonl holds every scrape (DuckDB, pandas and Polars read it).";
    if (c.serverMetrics === false) return '--server-metrics-formats has no effect with --no-server-metrics.';
    return null;
  },
};
