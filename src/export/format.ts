/**
 * Labels and number formats shared by the CSV and console exporters.
 */
import type { MetricDef } from '../metrics/types.js';

/** Units that AIPerf leaves out of a label (plain counts). */
const UNITLESS = new Set(['requests', 'count']);

/** `Header (unit)`, or just `Header` for counts of requests (AIPerf CSV and console label rule). */
export function metricLabel(def: Pick<MetricDef, 'header' | 'unit'>): string {
  return UNITLESS.has(def.unit) ? def.header : `${def.header} (${def.unit})`;
}

/** CSV number: integers as integers, everything else with 2 decimals (`1234`, `12.35`). */
export function formatCsvNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

/** Console number: `1,234.57` (en-US grouping, 2 decimals); `N/A` when missing. */
export function formatConsoleNumber(value: number | undefined): string {
  if (value === undefined) return 'N/A';
  return value.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
}

/** A CSV field, quoted when it holds a comma, quote or line break. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
