/**
 * `profile_export_aiperf_timeslices.csv`: every time slice of a `--slice-duration` run in AIPerf's
 * tidy layout (AIPerf "Time Slicing", "CSV Timeslice Export"): one row per slice, metric and
 * statistic, `Timeslice,Metric,Unit,Stat,Value`. Slices in time order (`Timeslice` is the JSON's
 * `timeslice_index`), metrics by tag, statistics in the summary CSV's column order; a run-level metric
 * has one `avg` row. The error-only metrics the summary CSV leaves out are left out here too.
 */
import { metricByTag } from '../metrics/registry.js';
import { STAT_KEYS } from '../metrics/stats.js';
import { isStatsSummary, type MetricSummary } from '../metrics/summary.js';
import type { Timeslice } from '../metrics/timeslices.js';
import { csvField, formatCsvNumber } from './format.js';
import type { TimesliceExportContext } from './timeslices-json.js';

/** File name of the time-slice CSV (AIPerf's). */
export const TIMESLICES_CSV_FILE_NAME = 'profile_export_aiperf_timeslices.csv';

const HEADER = 'Timeslice,Metric,Unit,Stat,Value';

function metricRows(slice: number, tag: string, m: MetricSummary): string[] {
  const def = metricByTag(tag);
  if (def === undefined || def.flags.errorOnly === true) return [];
  const lead = `${slice},${csvField(def.header)},${csvField(m.unit)}`;
  if (!isStatsSummary(m)) return [`${lead},avg,${formatCsvNumber(m.avg)}`];
  return STAT_KEYS.map((k) => `${lead},${k},${formatCsvNumber(m[k])}`);
}

function sliceRows(slice: Timeslice): string[] {
  const entries = Object.entries(slice.summary.metrics)
    .filter((e): e is [string, MetricSummary] => e[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return entries.flatMap(([tag, m]) => metricRows(slice.index, tag, m));
}

/** The time-slice CSV text, `\n` line endings; numbers as in the summary CSV (integers as-is, else 2 decimals). */
export function renderTimeslicesCsv(ctx: Pick<TimesliceExportContext, 'slices'>): string {
  const lines = [HEADER, ...ctx.slices.flatMap(sliceRows)];
  return `${lines.join('\n')}\n`;
}
