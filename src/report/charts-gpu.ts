/**
 * The report's GPU telemetry charts (`--gpu-telemetry`), on the shared time axis: utilisation (GPU
 * and SM active), power, and memory used, one line per GPU as scraped from the DCGM exporters.
 * Each is left out when no GPU served its fields. And the summary's `gpu_telemetry` as a table per
 * GPU.
 */

import { DCGM_FIELDS } from '../server-metrics/dcgm-fields.js';
import { type ChartSpec, timeAxisEndS } from './chart-base.js';
import { type Line, lineChart, shown } from './charts-server.js';
import { htmlTable } from './html-sections.js';
import { escapeHtml } from './html-text.js';
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

const two = (v: number | null | undefined): string => (typeof v === 'number' ? v.toFixed(2) : 'N/A');

/** The summary's GPU telemetry as a table per GPU (avg, min, max, p99; a counter's total); nothing without it. */
export function gpuSection(run: RunData): string {
  const section = run.gpu?.section;
  if (section === null || section === undefined) return '';
  const parts = section.endpoints
    .filter((e) => e.status === 'ok' || !e.default_url)
    .flatMap((e) => {
      if (e.status === 'unavailable')
        return [
          `<h3>${escapeHtml(e.url)}</h3><p class="muted">unavailable: ${escapeHtml(e.reason ?? '')}</p>`,
        ];
      return e.gpus.map((g) => {
        const head = `<h3>${escapeHtml(`${e.url}: GPU ${g.index ?? g.id}${g.name === null ? '' : ` (${g.name})`}`)}</h3>`;
        const rows = DCGM_FIELDS.flatMap((f) => {
          const m = g.metrics[f.key];
          if (m === undefined) return [];
          return [
            [
              f.label,
              m.unit,
              two(m.avg),
              two(m.min),
              two(m.max),
              two(m.p99),
              m.total === undefined ? '' : two(m.total),
            ],
          ];
        });
        return `${head}${htmlTable(['field', 'unit', 'avg', 'min', 'max', 'p99', 'increase'], rows, 2)}`;
      });
    });
  if (parts.length === 0) return '';
  const w = section.window;
  const note = `<p class="muted">Over ${escapeHtml(w.basis)} (${w.duration_s.toFixed(3)} s), scraped every ${section.interval_ms} ms from the DCGM exporters; a counter's statistics are those of its increase since the window's start.</p>`;
  return `<section id="gpu-telemetry"><h2>GPU telemetry</h2>${note}${parts.join('\n')}</section>`;
}
