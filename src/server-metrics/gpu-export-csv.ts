/**
 * `gpu_telemetry_export.csv`, in AIPerf's columns
 * (`Endpoint,GPU_Index,GPU_Name,GPU_UUID,Platform,Metric,avg,min,max,p1…p99,std`): one row per
 * exporter, GPU and DCGM field it served, `Endpoint` as `host:port`, `Metric` as the field's label
 * and unit (`SM clock (MHz)`), numbers with 2 decimals (a statistic without a value left empty).
 */
import { csvField } from '../export/format.js';
import { PERCENTILES } from '../metrics/stats.js';
import { DCGM_FIELDS } from './dcgm-fields.js';
import type { GpuStats } from './gpu-stats.js';

const CSV_STATS = ['avg', 'min', 'max', ...PERCENTILES.map((p) => `p${p}`), 'std'] as const;

/** The CSV text (`\n` line endings) of `endpoints`' GPUs (an endpoint without GPUs has no row). */
export function renderGpuTelemetryCsv(
  endpoints: ReadonlyArray<{ url: string; gpus: readonly GpuStats[] }>,
): string {
  const lines = [
    ['Endpoint', 'GPU_Index', 'GPU_Name', 'GPU_UUID', 'Platform', 'Metric', ...CSV_STATS].join(','),
  ];
  for (const e of endpoints)
    for (const g of e.gpus)
      for (const f of DCGM_FIELDS) {
        const m = g.metrics[f.key] as Record<string, unknown> | undefined;
        if (m === undefined) continue;
        const cells = [
          new URL(e.url).host,
          g.index ?? '',
          g.name ?? '',
          g.uuid ?? '',
          'nvidia',
          `${f.label} (${f.unit})`,
        ];
        const stats = CSV_STATS.map((k) => (typeof m[k] === 'number' ? (m[k] as number).toFixed(2) : ''));
        lines.push([...cells.map((c) => csvField(String(c))), ...stats].join(','));
      }
  return `${lines.join('\n')}\n`;
}
