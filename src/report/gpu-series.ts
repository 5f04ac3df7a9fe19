/**
 * A run's GPU telemetry read back for the report: each DCGM gauge field (server-metrics/dcgm-fields.ts)
 * of each GPU of each exporter from `gpu_telemetry_export.jsonl`, on the report's time axis (seconds
 * since the first request started), in the field's unit, as scraped.
 */
import { DCGM_FIELDS, fieldValues, gpusIn } from '../server-metrics/dcgm-fields.js';
import { GPU_TELEMETRY_JSONL_FILE_NAME, type GpuTelemetrySection } from '../server-metrics/gpu-exports.js';
import type { ScrapeLine } from '../server-metrics/snapshot.js';
import { byEndpoint } from '../server-metrics/window.js';
import { readScrapeFile, readSummarySection } from './scrape-file.js';
import type { GpuRunData, GpuSeries, TimePoints } from './types.js';

function endpointGpus(
  url: string,
  lines: readonly ScrapeLine[],
  t0Ns: bigint,
  several: boolean,
): GpuSeries[] {
  const out = new Map<string, GpuSeries>();
  for (const line of lines)
    for (const [id, gpu] of gpusIn(line.metrics))
      if (!out.has(id)) {
        const name = `GPU ${gpu.index ?? id}`;
        out.set(id, { label: several ? `${name} (${new URL(url).host})` : name, gauges: {} });
      }
  for (const f of DCGM_FIELDS) {
    if (f.kind !== 'gauge') continue;
    for (const line of lines) {
      const t = Number(line.timestamp_ns - t0Ns) / 1e9;
      for (const [id, v] of fieldValues(f, line.metrics)) {
        const gauges = out.get(id)?.gauges;
        if (gauges === undefined) continue;
        const points: TimePoints = gauges[f.key] ?? [];
        points.push([t, v]);
        gauges[f.key] = points;
      }
    }
  }
  return [...out.values()];
}

/**
 * Reads the GPU telemetry of the run in `dir`; null when it has no `gpu_telemetry_export.jsonl`.
 * @param t0Ns the run's time zero (its earliest `request_start_ns`), epoch ns.
 * @throws {RunLoadError} naming the file and line of a malformed line.
 */
export async function loadGpuRun(dir: string, t0Ns: bigint): Promise<GpuRunData | null> {
  const lines = await readScrapeFile(dir, GPU_TELEMETRY_JSONL_FILE_NAME);
  if (lines === null) return null;
  const endpoints = [...byEndpoint(lines)];
  const several = endpoints.length > 1;
  return {
    gpus: endpoints.flatMap(([url, own]) => endpointGpus(url, own, t0Ns, several)),
    section: await readSummarySection<GpuTelemetrySection>(dir, 'gpu_telemetry'),
  };
}
