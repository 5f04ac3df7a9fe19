/**
 * The report's GPU telemetry charts (`--gpu-telemetry`), on the shared time axis: utilisation (GPU
 * and SM active), power, and memory used, one line per GPU as scraped from the DCGM exporters.
 * Each is left out when no GPU served its fields.
 */
import { type ChartSpec, timeAxisEndS } from './chart-base.js';
import { type Line, lineChart, shown } from './charts-server.js';
import type { GpuSeries, RunData } from './types.js';

/** The id of every GPU chart (`plots/<id>.png`), in report order. */
export const GPU_CHART_IDS = [
  'gpu-utilization-over-time',
  'gpu-power-over-time',
  'gpu-memory-over-time',
] as const;

const linesOf = (gpus: readonly GpuSeries[], key: string, what = ''): Line[] =>
  gpus.map((g) => ({ name: `${g.label}${what}`, data: shown(g.gauges[key] ?? []) }));

/** The GPU charts of `run`; none without GPU telemetry. */
export function gpuCharts(run: RunData): ChartSpec[] {
  const gpus = run.gpu?.gpus;
  if (gpus === undefined || gpus.length === 0) return [];
  const endS = timeAxisEndS(run.timeline ?? run.requests);
  const sub = 'as scraped from the DCGM exporter';
  const charts = [
    lineChart(endS, 'gpu-utilization-over-time', 'GPU utilization', sub, '%', [
      ...linesOf(gpus, 'nvidia_gpu_utilization'),
      ...linesOf(gpus, 'nvidia_sm_utilization', ' SM active').map((l) => ({ ...l, dashed: true })),
    ]),
    lineChart(endS, 'gpu-power-over-time', 'GPU power', sub, 'W', linesOf(gpus, 'nvidia_power_usage')),
    lineChart(
      endS,
      'gpu-memory-over-time',
      'GPU memory used',
      sub,
      'GB',
      linesOf(gpus, 'nvidia_memory_used'),
    ),
  ];
  return charts.filter((c): c is ChartSpec => c !== null);
}
