/**
 * Per-GPU statistics of the DCGM scrapes over the benchmark window (window.ts), for
 * `gpu_telemetry_export.json`/`.csv` and the summary's `gpu_telemetry` section: a gauge field
 * (utilisation, memory, power, clocks, temperatures) by `avg, min, max, p1…p99, std` of the scrapes
 * inside the window; a counter field (energy, throttling time) by its increase over the scrapes that
 * bracket the window (`total`, resets handled as for server metrics), its statistics those of the
 * running increase since the window's start at each scrape inside it (AIPerf's energy against the
 * pre-profile baseline: `max` is the energy used by then).
 */
import { computeStats } from '../metrics/stats.js';
import { DCGM_FIELDS, type DcgmField, fieldValues, type GpuIdentity, gpusIn } from './dcgm-fields.js';
import type { ScrapeLine } from './snapshot.js';
import {
  bracketWindow,
  counterRun,
  increase,
  insideWindow,
  type MetricsWindow,
  type Point,
  timeIn,
} from './window.js';

/** One field of one GPU over the window; the statistics are absent when no scrape fell inside it. */
export interface GpuFieldStats {
  unit: string;
  /** Scrapes inside the window with a value. */
  count: number;
  avg?: number;
  min?: number;
  max?: number;
  p1?: number;
  p5?: number;
  p10?: number;
  p25?: number;
  p50?: number;
  p75?: number;
  p90?: number;
  p95?: number;
  p99?: number;
  std?: number;
  /** Counters: the increase over the window, in `unit`; null with fewer than two bracketing scrapes. */
  total?: number | null;
  /** Counters: the value went down (a restart) this many times. */
  resets?: number;
}

/** One GPU of one endpoint over the window: who it is and its fields (those it served). */
export interface GpuStats extends GpuIdentity {
  metrics: Record<string, GpuFieldStats>;
}

const round = (x: number): number => Number.parseFloat(x.toPrecision(10));

function statsOf(values: readonly number[], unit: string): GpuFieldStats {
  const stats = computeStats(Float64Array.from(values));
  if (stats === undefined) return { unit, count: 0 };
  const { count, ...rest } = stats;
  return { unit, count, ...Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, round(v)])) };
}

function gaugeStats(f: DcgmField, points: readonly Point[], w: MetricsWindow): GpuFieldStats {
  return statsOf(
    insideWindow(points, w).map((p) => p.v),
    f.unit,
  );
}

function counterStats(f: DcgmField, points: readonly Point[], w: MetricsWindow): GpuFieldStats {
  const bracket = bracketWindow(points, w);
  const running: Point[] = [];
  let sum = 0;
  for (let i = 0; i < bracket.length; i++) {
    const p = bracket[i] as Point;
    if (i > 0) sum += increase((bracket[i - 1] as Point).v, p.v);
    running.push({ t: p.t, v: sum });
  }
  const run = counterRun(bracket);
  return {
    ...statsOf(
      insideWindow(running, w).map((p) => p.v),
      f.unit,
    ),
    total: bracket.length < 2 ? null : round(run.delta),
    resets: run.resets,
  };
}

/** Every GPU one endpoint's scrapes (time-ordered) name, with its fields over window `w`. */
export function gpuStats(lines: readonly ScrapeLine[], w: MetricsWindow): GpuStats[] {
  const gpus = new Map<string, GpuIdentity>();
  for (const line of lines)
    for (const [id, gpu] of gpusIn(line.metrics)) if (!gpus.has(id)) gpus.set(id, gpu);
  const points = new Map<string, Map<string, Point[]>>(); // field key → GPU id → points
  for (const f of DCGM_FIELDS) {
    const own = new Map<string, Point[]>();
    for (const line of lines)
      for (const [id, v] of fieldValues(f, line.metrics)) {
        const list = own.get(id) ?? [];
        list.push({ t: timeIn(w, line.timestamp_ns), v });
        own.set(id, list);
      }
    points.set(f.key, own);
  }
  return [...gpus.values()].map((gpu) => {
    const metrics: Record<string, GpuFieldStats> = {};
    for (const f of DCGM_FIELDS) {
      const own = points.get(f.key)?.get(gpu.id);
      if (own === undefined) continue; // a field the exporter does not serve: absent, not 0
      metrics[f.key] = f.kind === 'gauge' ? gaugeStats(f, own, w) : counterStats(f, own, w);
    }
    return { ...gpu, metrics };
  });
}
