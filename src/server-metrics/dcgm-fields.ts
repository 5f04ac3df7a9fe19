/**
 * The DCGM exporter fields tokenload follows per GPU (`--gpu-telemetry`), under AIPerf's names
 * (`nvidia_*`) and in AIPerf's units (AIPerf's GPU telemetry tutorial and its DCGM field mapping:
 * memory used MiB → GB ×1.048576e-3, frame buffer free MiB → MB ×1.048576, energy mJ → MJ ×1e-9);
 * the field names and units are NVIDIA's (dcgm-exporter's default counters CSV, DCGM field IDs).
 * A GPU is told apart by its `UUID` label (else its `gpu` index), its name by `modelName`, its host
 * by `Hostname`.
 */
import type { Labels } from './prometheus-text.js';
import type { SnapshotMetrics } from './snapshot.js';

/** One followed DCGM field. */
export interface DcgmField {
  /** tokenload's (AIPerf's) name of the series. */
  key: string;
  /** The exporter's family name. */
  family: string;
  /** `gauge`: statistics of the samples; `counter`: its increase over the window. */
  kind: 'gauge' | 'counter';
  /** Unit after `scale`. */
  unit: string;
  /** Multiplier from DCGM's unit to `unit`. */
  scale: number;
  /** Shown in the CSV, the console and the report. */
  label: string;
}

const field = (
  key: string,
  family: string,
  unit: string,
  label: string,
  extra: Partial<Pick<DcgmField, 'kind' | 'scale'>> = {},
): DcgmField => ({ key, family, unit, label, kind: extra.kind ?? 'gauge', scale: extra.scale ?? 1 });

/** Every followed field, in display order. */
export const DCGM_FIELDS: readonly DcgmField[] = [
  field('nvidia_gpu_utilization', 'DCGM_FI_DEV_GPU_UTIL', '%', 'GPU utilization'),
  field('nvidia_sm_utilization', 'DCGM_FI_PROF_SM_ACTIVE', '%', 'SM active', { scale: 100 }),
  field('nvidia_memory_utilization', 'DCGM_FI_DEV_MEM_COPY_UTIL', '%', 'memory copy utilization'),
  field('nvidia_memory_used', 'DCGM_FI_DEV_FB_USED', 'GB', 'GPU memory used', { scale: 1.048576e-3 }),
  field('nvidia_fb_free', 'DCGM_FI_DEV_FB_FREE', 'MB', 'frame buffer free', { scale: 1.048576 }),
  field('nvidia_power_usage', 'DCGM_FI_DEV_POWER_USAGE', 'W', 'power'),
  field('nvidia_energy_consumption', 'DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION', 'MJ', 'energy', {
    kind: 'counter',
    scale: 1e-9,
  }),
  field('nvidia_sm_clock', 'DCGM_FI_DEV_SM_CLOCK', 'MHz', 'SM clock'),
  field('nvidia_mem_clock', 'DCGM_FI_DEV_MEM_CLOCK', 'MHz', 'memory clock'),
  field('nvidia_temperature', 'DCGM_FI_DEV_GPU_TEMP', '°C', 'GPU temperature'),
  field('nvidia_memory_temp', 'DCGM_FI_DEV_MEMORY_TEMP', '°C', 'memory temperature'),
  field('nvidia_encoder_utilization', 'DCGM_FI_DEV_ENC_UTIL', '%', 'encoder utilization'),
  field('nvidia_decoder_utilization', 'DCGM_FI_DEV_DEC_UTIL', '%', 'decoder utilization'),
  field('nvidia_xid_errors', 'DCGM_FI_DEV_XID_ERRORS', 'count', 'last XID error'),
  field('nvidia_power_violation', 'DCGM_FI_DEV_POWER_VIOLATION', 'us', 'power throttling', {
    kind: 'counter',
  }),
  field('nvidia_thermal_violation', 'DCGM_FI_DEV_THERMAL_VIOLATION', 'us', 'thermal throttling', {
    kind: 'counter',
  }),
];

/** Who a GPU is, from its series' labels. */
export interface GpuIdentity {
  /** `UUID`, else `gpu:<index>`. */
  id: string;
  /** The `gpu` label as a number; null without one. */
  index: number | null;
  uuid: string | null;
  /** `modelName`, e.g. `NVIDIA H100 80GB HBM3`. */
  name: string | null;
  hostname: string | null;
}

/** The GPU a series is about; null for a series without `gpu` or `UUID` label. */
export function gpuOf(labels: Labels | undefined): GpuIdentity | null {
  const uuid = labels?.UUID ?? null;
  const indexText = labels?.gpu;
  if (uuid === null && indexText === undefined) return null;
  const index = indexText === undefined || !/^\d+$/.test(indexText) ? null : Number(indexText);
  return {
    id: uuid ?? `gpu:${indexText}`,
    index,
    uuid,
    name: labels?.modelName ?? null,
    hostname: labels?.Hostname ?? null,
  };
}

/**
 * The value of `f` for each GPU in one scrape, in `f.unit` (the first series of a GPU: a MIG
 * instance's own series are not told apart); a GPU whose value is not a number is left out.
 */
export function fieldValues(f: DcgmField, metrics: SnapshotMetrics): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of metrics[f.family] ?? []) {
    const gpu = gpuOf(s.labels);
    if (gpu === null || out.has(gpu.id) || typeof s.value !== 'number') continue;
    out.set(gpu.id, s.value * f.scale);
  }
  return out;
}

/** Every GPU a scrape names (by any followed field), by id, in order of first appearance. */
export function gpusIn(metrics: SnapshotMetrics): Map<string, GpuIdentity> {
  const out = new Map<string, GpuIdentity>();
  for (const f of DCGM_FIELDS)
    for (const s of metrics[f.family] ?? []) {
      const gpu = gpuOf(s.labels);
      if (gpu !== null && !out.has(gpu.id)) out.set(gpu.id, gpu);
    }
  return out;
}
