/**
 * `profile_export_aiperf.csv`, in AIPerf's layout: a statistics section for per-record metrics, a
 * blank line, a `Metric,Value` section for run-level metrics, and — tokenload addition — an error
 * section when requests failed. Rows are sorted by tag; error-only metrics are excluded.
 */
import type { MetricTag } from '../metrics/registry.js';
import { metricByTag } from '../metrics/registry.js';
import { STAT_KEYS } from '../metrics/stats.js';
import { isStatsSummary, type MetricSummary, type StatsSummary, type Summary } from '../metrics/summary.js';
import { csvField, formatCsvNumber, metricLabel } from './format.js';

/** Default file name of the summary CSV. */
export const SUMMARY_CSV_FILE_NAME = 'profile_export_aiperf.csv';

const STATS_HEADER = `Metric,${STAT_KEYS.join(',')}`;

function sortedEntries(summary: Summary): [string, MetricSummary][] {
  return Object.entries(summary.metrics)
    .filter((e): e is [MetricTag, MetricSummary] => e[1] !== undefined)
    .filter(([tag]) => metricByTag(tag)?.flags.errorOnly !== true)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function label(tag: string, m: MetricSummary): string {
  return csvField(metricLabel({ header: metricByTag(tag)?.header ?? tag, unit: m.unit }));
}

function statsRow(tag: string, m: StatsSummary): string {
  return [label(tag, m), ...STAT_KEYS.map((k) => formatCsvNumber(m[k]))].join(',');
}

function errorRows(summary: Summary): string[] {
  if (summary.errorSummary.length === 0) return [];
  const rows = summary.errorSummary.map((e) =>
    [String(e.code), csvField(e.type), csvField(e.message), String(e.count)].join(','),
  );
  return ['', 'Error Code,Error Type,Error Message,Count', ...rows];
}

/**
 * The CSV text, `\n` line endings. Labels are `Header (unit)` (no unit for request counts); numbers
 * are integers as-is, other values with 2 decimals.
 */
export function renderSummaryCsv(summary: Summary): string {
  const entries = sortedEntries(summary);
  const stats = entries.flatMap(([tag, m]) => (isStatsSummary(m) ? [statsRow(tag, m)] : []));
  const scalars = entries.flatMap(([tag, m]) =>
    isStatsSummary(m) ? [] : [`${label(tag, m)},${formatCsvNumber(m.avg)}`],
  );
  const lines = [STATS_HEADER, ...stats, '', 'Metric,Value', ...scalars, ...errorRows(summary)];
  return `${lines.join('\n')}\n`;
}
