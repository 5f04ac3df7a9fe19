/**
 * Every chart of a single-run report, in display order. Builders are pure functions of the run;
 * a chart without data (e.g. TTFT in a non-streaming run, errors in a clean run) is left out.
 */
import type { ChartSpec } from './chart-base.js';
import { timeAxisEndS } from './chart-base.js';
import { GPU_CHART_IDS, gpuCharts } from './charts-gpu.js';
import {
  cdfChart,
  ICL_METRIC,
  interChunkLatencyChart,
  LATENCY_METRICS,
  type LatencyMetric,
  metricValues,
  overTimeChart,
  summaryMarks,
} from './charts-latency.js';
import { errorTimelineChart, inFlightChart, scheduleLagChart, throughputChart } from './charts-load.js';
import { SERVER_CHART_IDS, serverCharts } from './charts-server.js';
import { sliceLatencyChart, sliceThroughputChart } from './charts-slices.js';
import { cachedTokensChart, islVsTtftChart, perTurnTtftChart } from './charts-tokens.js';
import { perTurnChart } from './charts-turns.js';
import { steadyWindowS, withSteadyBand } from './steady-band.js';
import type { RunData } from './types.js';

export type { ChartSpec } from './chart-base.js';
export {
  cdfChart,
  cdfMarksOf,
  interChunkLatencyChart,
  LATENCY_METRICS,
  overTimeChart,
} from './charts-latency.js';
export { errorTimelineChart, inFlightChart, scheduleLagChart, throughputChart } from './charts-load.js';
export { cachedTokensChart, islVsTtftChart, perTurnTtftChart } from './charts-tokens.js';
export { perTurnChart } from './charts-turns.js';

/**
 * The id of every chart {@link buildRunCharts} can return (each PNG of `tokenload plot` is
 * `plots/<id>.png`): what a later run removes from `plots/` as tokenload's own.
 */
export const RUN_CHART_IDS: readonly string[] = [
  ...LATENCY_METRICS.flatMap((m) => [`${m.id}-over-time`, `${m.id}-cdf`]),
  `${ICL_METRIC.id}-cdf`,
  'output-throughput-over-time',
  'in-flight-over-time',
  'slice-throughput-over-time',
  'slice-latency-over-time',
  'schedule-lag-over-time',
  'isl-vs-ttft',
  'cached-tokens',
  'ttft-by-turn',
  'per-turn',
  'errors-over-time',
  ...SERVER_CHART_IDS,
  ...GPU_CHART_IDS,
];

/**
 * The CDF of a latency metric over the requests; drawn from the sample when the run has more
 * requests than were kept (load-run.ts), its marks then the summary's percentiles over all of them.
 */
function latencyCdf(run: RunData, m: LatencyMetric): ChartSpec | null {
  const values = metricValues(run.requests, m);
  const sampled = (run.timeline?.count ?? 0) > run.requests.length;
  const marks = sampled ? summaryMarks(run.summary?.metrics[m.tag]) : null;
  if (marks === null) return cdfChart(m, [{ name: m.label, values }]);
  const note = `a sample of ${run.requests.length.toLocaleString('en-US')} of ${(run.timeline?.count ?? 0).toLocaleString('en-US')} requests; marks: the summary’s, over all`;
  return cdfChart(m, [{ name: m.label, values, marks }], { note });
}

/**
 * The charts of `run`: TTFT, ITL and latency over time; their CDFs (each marking p50/p90/p99), the
 * per-chunk inter-chunk latency CDF right after ITL's; output token throughput and
 * requests in flight over time; per-slice throughput and latency (`--slice-duration`); schedule lag; ISL vs TTFT; reported vs ideal cached tokens; TTFT by
 * turn; TTFT p50/p90 and cache hits by turn index (the summary's `per_turn`); errors over time; the server's own metrics over time (charts-server.ts). When the summary
 * has a steady-state window (not a fallback to the whole run), it is shaded on every chart over time.
 */
export function buildRunCharts(run: RunData): ChartSpec[] {
  const r = run.requests;
  // Bins, counts and the time axis over every request; the per-request points may be a sample.
  const all = run.timeline ?? r;
  const endS = timeAxisEndS(all);
  const charts: (ChartSpec | null)[] = [
    ...LATENCY_METRICS.map((m) => overTimeChart(r, m, endS)),
    ...LATENCY_METRICS.flatMap((m) => [
      latencyCdf(run, m),
      // Beside the per-request ITL: the gaps between chunks it averages.
      m.id === 'itl'
        ? interChunkLatencyChart(run.interChunkLatencyMs, run.summary?.metrics.inter_chunk_latency)
        : null,
    ]),
    throughputChart(all),
    inFlightChart(all),
    sliceThroughputChart(run.slices ?? [], endS),
    sliceLatencyChart(run.slices ?? [], endS),
    scheduleLagChart(r, endS),
    islVsTtftChart(r),
    cachedTokensChart(r),
    perTurnTtftChart(r),
    perTurnChart(run.summary?.perTurn ?? null),
    errorTimelineChart(all),
    ...serverCharts(run),
    ...gpuCharts(run),
  ];
  const drawn = charts.filter((c): c is ChartSpec => c !== null);
  const ss = run.summary?.steadyState;
  if (ss === null || ss === undefined || ss.fallback_reason !== null) return drawn;
  return withSteadyBand(drawn, steadyWindowS(ss, run.t0Ns));
}
