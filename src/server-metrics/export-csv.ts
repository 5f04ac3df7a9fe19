/**
 * `server_metrics_export.csv`, in AIPerf's layout: `#` comment lines, then one section per type
 * (gauge, counter, histogram, unknown) separated by a blank line, each with the header
 * `Endpoint,Type,Metric,Unit,<statistics…>,<one column per label name…>,Description` (histograms add
 * `buckets` as `le=count;…`; integers as they are, other numbers with 4 decimals); `…_info` families last, one row per label
 * (`Endpoint,Metric,Key,Value,Description`).
 */
import { csvField } from '../export/format.js';
import { PERCENTILES } from '../metrics/stats.js';
import type { ExportFamily, ExportSeries, ExportType } from './family-stats.js';

const STATS: Record<ExportType, readonly string[]> = {
  gauge: ['avg', 'min', 'max', 'std', ...PERCENTILES.map((p) => `p${p}`)],
  unknown: ['avg', 'min', 'max', 'std', ...PERCENTILES.map((p) => `p${p}`)],
  counter: ['total', 'rate', 'resets'],
  histogram: ['count', 'count_rate', 'sum', 'sum_rate', 'avg', ...PERCENTILES.map((p) => `p${p}_estimate`)],
};

/** A number as AIPerf's server-metrics CSV writes it: integers as they are, others with 4 decimals. */
const formatCsvNumber = (v: number): string => (Number.isInteger(v) ? String(v) : v.toFixed(4));

interface Row {
  name: string;
  family: ExportFamily;
  series: ExportSeries;
}

function sectionLines(type: ExportType, rows: readonly Row[]): string[] {
  const labelNames = [...new Set(rows.flatMap((r) => Object.keys(r.series.labels ?? {})))].sort();
  const stats = STATS[type];
  const header = ['Endpoint', 'Type', 'Metric', 'Unit', ...stats, ...labelNames, 'Description'];
  if (type === 'histogram') header.push('buckets');
  const lines = [header.join(',')];
  for (const { name, family, series } of rows) {
    const cells = [
      csvField(series.endpoint_url),
      type,
      csvField(name),
      family.unit ?? '',
      ...stats.map((k) => {
        const v = series.stats?.[k];
        return v === undefined ? '' : formatCsvNumber(v);
      }),
      ...labelNames.map((l) => csvField(series.labels?.[l] ?? '')),
      csvField(family.description),
    ];
    if (type === 'histogram')
      cells.push(
        csvField(
          Object.entries(series.buckets ?? {})
            .map(([le, n]) => `${le}=${formatCsvNumber(n)}`)
            .join(';'),
        ),
      );
    lines.push(cells.join(','));
  }
  return lines;
}

function infoLines(rows: readonly Row[]): string[] {
  const lines = ['Endpoint,Metric,Key,Value,Description'];
  for (const { name, family, series } of rows)
    for (const [key, value] of Object.entries(series.labels ?? {}).sort())
      lines.push(
        [series.endpoint_url, name, key, value, family.description].map((c) => csvField(c)).join(','),
      );
  return lines;
}

/** The CSV text (`\n` line endings) of the exported families. */
export function renderServerMetricsCsv(
  families: Readonly<Record<string, ExportFamily>>,
  version: string,
): string {
  const rows: Row[] = Object.entries(families).flatMap(([name, family]) =>
    family.series.map((series) => ({ name, family, series })),
  );
  const sections: string[][] = [];
  for (const type of ['gauge', 'counter', 'histogram', 'unknown'] as const) {
    const own = rows.filter((r) => r.family.type === type && !r.name.endsWith('_info'));
    if (own.length > 0) sections.push(sectionLines(type, own));
  }
  const info = rows.filter((r) => r.name.endsWith('_info'));
  if (info.length > 0) sections.push(infoLines(info));
  const head = [
    '# tokenload server metrics export (CSV)',
    `# tokenload_version: ${version}`,
    '# schema_version: 1.0',
  ];
  return `${[head.join('\n'), ...sections.map((s) => s.join('\n'))].join('\n\n')}\n`;
}
