/**
 * The rows of the summary table, chosen and ordered as the console report does: metrics the console
 * shows, by display order, `Header (unit)` labels, values formatted `1,234.57`, `N/A` when missing.
 */
import { formatConsoleNumber, metricLabel } from '../export/format.js';
import { fromScheduleRowsShown } from '../export/from-schedule.js';
import { metricByTag } from '../metrics/registry.js';
import type { MetricDef } from '../metrics/types.js';
import type { SummaryMetric } from './types.js';

/** Statistic columns, in console order. */
export const SUMMARY_COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const;

/** One table row: the label and one formatted cell per {@link SUMMARY_COLUMNS} entry. */
export interface SummaryRow {
  tag: string;
  label: string;
  cells: string[];
}

function consoleDef(tag: string): MetricDef | undefined {
  const def = metricByTag(tag);
  return def === undefined || def.flags.noConsole === true || def.flags.errorOnly === true ? undefined : def;
}

function cellsOf(m: SummaryMetric): string[] {
  const hasStats = m.count !== undefined;
  return SUMMARY_COLUMNS.map((c) => (c === 'avg' || hasStats ? formatConsoleNumber(m[c]) : 'N/A'));
}

/**
 * Rows for the metrics in `metrics` (summary JSON entries by tag) that the console table shows: its
 * own rows, and the latency-from-the-schedule rows when they differ materially from the usual ones
 * (the console's rule, export/from-schedule.ts, judged with `sendLagLimitMs` as the console does).
 * Unknown tags (e.g. from a newer version) are left out.
 */
export function summaryRows(
  metrics: Readonly<Record<string, SummaryMetric>>,
  sendLagLimitMs = 0,
): SummaryRow[] {
  const fromSchedule = fromScheduleRowsShown(metrics, sendLagLimitMs);
  return Object.entries(metrics)
    .flatMap(([tag, m]) => {
      const def = consoleDef(tag) ?? (fromSchedule.has(tag) ? metricByTag(tag) : undefined);
      return def === undefined ? [] : [{ def, m }];
    })
    .sort((a, b) => a.def.displayOrder - b.def.displayOrder)
    .map(({ def, m }) => ({ tag: def.tag, label: metricLabel(def), cells: cellsOf(m) }));
}

/** A console row the report leaves out because another row holds the same figures, and why they match. */
export interface RepeatedRow {
  tag: string;
  sameAs: string;
  why: string;
}

/** Pairs of metrics that are equal whenever the model wrote no reasoning tokens. */
export const REPEAT_CANDIDATES: readonly RepeatedRow[] = [
  {
    tag: 'time_to_first_output_token',
    sameAs: 'time_to_first_token',
    why: 'no reasoning tokens came before the first answer token',
  },
  {
    tag: 'output_token_count',
    sameAs: 'output_sequence_length',
    why: 'no output token was a reasoning token',
  },
];

/** Whether two metrics' figures are equal: every number, and every object of numbers (`ci95`) by value. */
function sameFigures(a: SummaryMetric, b: SummaryMetric): boolean {
  return JSON.stringify(sortedEntries(a)) === JSON.stringify(sortedEntries(b));
}

function sortedEntries(m: SummaryMetric): [string, unknown][] {
  return Object.entries(m).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
}

/** The candidate rows of `metrics` whose every figure (unit, count and statistics) equals their twin's. */
export function repeatedRows(metrics: Readonly<Record<string, SummaryMetric>>): RepeatedRow[] {
  return REPEAT_CANDIDATES.filter((r) => {
    const a = metrics[r.tag];
    const b = metrics[r.sameAs];
    return a !== undefined && b !== undefined && sameFigures(a, b);
  });
}
