/**
 * Run-level duration and rates (AIPerf metric reference, "Derived Metrics"). Every rate divides by
 * the benchmark duration, the window from the earliest request start to the latest response.
 */
import type { MetricUnit } from '../../record/metric-types.js';
import type { RunMetricDef, RunTotals } from '../types.js';

/**
 * Benchmark window in seconds: latest response timestamp − earliest request start, over all records
 * (a response timestamp is the last content chunk, or the record's end when it has none). Undefined
 * unless the window is positive. AIPerf `max_response_timestamp − min_request_timestamp`.
 */
export function benchmarkDurationSec(t: RunTotals): number | undefined {
  if (t.minStartNs === null || t.maxResponseNs === null || t.maxResponseNs <= t.minStartNs) return undefined;
  return (t.maxResponseNs - t.minStartNs) / 1e9;
}

function perSecond(numerator: (t: RunTotals) => number | null): (t: RunTotals) => number | undefined {
  return (t) => {
    const durationSec = benchmarkDurationSec(t);
    const n = numerator(t);
    return durationSec === undefined || n === null ? undefined : n / durationSec;
  };
}

function rateMetric(
  tag: string,
  header: string,
  unit: MetricUnit,
  order: number,
  numerator: (t: RunTotals) => number | null,
): RunMetricDef {
  return {
    tag,
    header,
    unit,
    kind: 'derived',
    flags: { largerIsBetter: true },
    displayOrder: order,
    compute: perSecond(numerator),
  };
}

/** Benchmark Duration, sec: see {@link benchmarkDurationSec}. AIPerf `benchmark_duration`. */
export const benchmarkDuration: RunMetricDef = {
  tag: 'benchmark_duration',
  header: 'Benchmark Duration',
  unit: 'sec',
  kind: 'derived',
  flags: {},
  displayOrder: 1150,
  compute: benchmarkDurationSec,
};

/** Output Token Throughput, tokens/sec: Σ OSL / duration. AIPerf `output_token_throughput`. */
export const outputTokenThroughput = rateMetric(
  'output_token_throughput',
  'Output Token Throughput',
  'tokens/sec',
  800,
  (t) => t.totalOsl,
);

/** Input Token Throughput, tokens/sec: Σ ISL / duration. AIPerf `input_token_throughput`. */
export const inputTokenThroughput = rateMetric(
  'input_token_throughput',
  'Input Token Throughput',
  'tokens/sec',
  805,
  (t) => t.totalIsl,
);

/** Total Token Throughput, tokens/sec: (Σ ISL + Σ OSL) / duration. AIPerf `total_token_throughput`. */
export const totalTokenThroughput = rateMetric(
  'total_token_throughput',
  'Total Token Throughput',
  'tokens/sec',
  810,
  (t) => t.totalIsl + t.totalOsl,
);

/** Request Throughput, requests/sec: valid records / duration. AIPerf `request_throughput`. */
export const requestThroughput = rateMetric(
  'request_throughput',
  'Request Throughput',
  'requests/sec',
  900,
  (t) => t.validCount,
);

/** Goodput, requests/sec: good records / duration; only with SLOs. AIPerf `goodput`. */
export const goodput = rateMetric('goodput', 'Goodput', 'requests/sec', 1000, (t) => t.goodCount);

/**
 * Good Request Fraction, ratio: good / (valid + failed), so errors count against it; only with SLOs.
 * AIPerf `good_request_fraction`.
 */
export const goodRequestFraction: RunMetricDef = {
  tag: 'good_request_fraction',
  header: 'Good Request Fraction',
  unit: 'ratio',
  kind: 'derived',
  flags: { largerIsBetter: true },
  displayOrder: 1020,
  compute: (t) => {
    const total = t.validCount + t.errorCount;
    return t.goodCount === null || total === 0 ? undefined : t.goodCount / total;
  },
};
