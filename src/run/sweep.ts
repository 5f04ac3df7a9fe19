/**
 * The sweep aggregate: after the runs of a `--concurrency` / `--request-rate` list,
 * `profile_export_aiperf_sweep.json` and `.csv` in `sweep_aggregate/` (with `--num-profile-runs` in
 * the `repeated` mode: `aggregate/sweep_aggregate/`), AIPerf's layout (its docs/api/sweep-aggregates.md): per value the
 * metric statistics across its runs (the mean alone for one run per value), the best throughput and
 * latency, and the Pareto-optimal values (most `request_throughput_avg`, least
 * `time_to_first_token_p99`, else `request_latency_p99`). The console gets the latency–throughput
 * table a user plots first.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Table from 'cli-table3';
import type { SweepAxis } from '../config/sweep.js';
import type { AcrossRuns } from '../metrics/confidence.js';
import { makeWritableDir } from '../util/make-dir.js';
import { type FinishedRun, metricsAcross, splitRuns } from './aggregate.js';

/** The sweep aggregate's folder and file names. */
export const SWEEP_AGGREGATE_DIR_NAME = 'sweep_aggregate';
export const SWEEP_JSON_FILE_NAME = 'profile_export_aiperf_sweep.json';
export const SWEEP_CSV_FILE_NAME = 'profile_export_aiperf_sweep.csv';

/**
 * The files an older tokenload wrote in a sweep's folder (`sweep_summary.*`), still removed when a
 * new run claims the folder.
 */
export const OLD_SWEEP_SUMMARY_FILE_NAMES: readonly string[] = ['sweep_summary.json', 'sweep_summary.csv'];

/**
 * Whether `name` is a sweep value folder: AIPerf's `concurrency_10`, `request_rate_2.5`, or an
 * older tokenload's `concurrency10`, `request_rate2.5`.
 */
export function isSweepValueFolder(name: string): boolean {
  return /^(concurrency_?\d+|request_rate_?\d[\d.e+-]*)$/.test(name);
}

type Stat = AcrossRuns | { mean: number; unit: string };

/** One value of the sweep: its parameters and metrics. */
export interface SweepCombination {
  parameters: Record<string, number>;
  metrics: Record<string, Stat>;
}

/** What the sweep aggregate needs of the runs: per value, the runs of that value in trial order. */
export interface SweepRuns {
  axis: SweepAxis;
  trials: number;
  /** `--parameter-sweep-mode`. */
  mode: 'repeated' | 'independent';
  confidenceLevel: number;
  /** Runs by value index. */
  byValue: FinishedRun[][];
}

/** A best configuration: the value, its metric and unit. */
interface Best {
  parameters: Record<string, number>;
  metric: number;
  unit: string;
}

const THROUGHPUT = 'request_throughput_avg';
const LATENCIES = ['time_to_first_token_p99', 'request_latency_p99'];

function pick(
  combos: readonly SweepCombination[],
  key: string,
  better: (a: number, b: number) => boolean,
): Best | null {
  let best: Best | null = null;
  for (const c of combos) {
    const m = c.metrics[key];
    if (m !== undefined && (best === null || better(m.mean, best.metric)))
      best = { parameters: c.parameters, metric: m.mean, unit: m.unit };
  }
  return best;
}

/** The latency key the sweep ranks by: TTFT p99 when every value has it, else request latency p99. */
function latencyKey(combos: readonly SweepCombination[]): string {
  return LATENCIES.find((k) => combos.every((c) => c.metrics[k] !== undefined)) ?? 'request_latency_p99';
}

/** The values no other value beats on both throughput (higher) and latency (lower). */
export function paretoOptimal(combos: readonly SweepCombination[]): Array<Record<string, number>> {
  const lat = latencyKey(combos);
  const points = combos.flatMap((c) => {
    const t = c.metrics[THROUGHPUT]?.mean;
    const l = c.metrics[lat]?.mean;
    return t === undefined || l === undefined ? [] : [{ c, t, l }];
  });
  return points
    .filter((p) => !points.some((q) => q.t >= p.t && q.l <= p.l && (q.t > p.t || q.l < p.l)))
    .map((p) => p.c.parameters);
}

/** The sweep aggregate JSON object. */
export function sweepAggregate(runs: SweepRuns): Record<string, unknown> {
  const all = runs.byValue.flat();
  const { ok } = splitRuns(all);
  // A sweep's runs repeat their labels per value (run_0001 of each): the value names the run.
  const failed = runs.byValue.flatMap((valueRuns, i) =>
    splitRuns(valueRuns).failed.map((f) => ({
      ...f,
      label: `${runs.axis.name}_${runs.axis.values[i]}/${f.label}`,
    })),
  );
  const combos: SweepCombination[] = runs.byValue.map((valueRuns, i) => ({
    parameters: { [runs.axis.name]: runs.axis.values[i] as number },
    metrics: metricsAcross(splitRuns(valueRuns).ok, runs.confidenceLevel),
  }));
  const bestThroughput = pick(combos, THROUGHPUT, (a, b) => a > b);
  const bestLatency = pick(combos, latencyKey(combos), (a, b) => a < b);
  return {
    aggregation_type: 'sweep',
    num_profile_runs: all.length,
    num_successful_runs: ok.length,
    failed_runs: failed,
    metadata: {
      sweep_parameters: [{ name: runs.axis.name, values: runs.axis.values }],
      num_combinations: runs.axis.values.length,
      num_trials_per_value: runs.trials,
      sweep_mode: runs.mode,
      confidence_level: runs.confidenceLevel,
    },
    per_combination_metrics: combos,
    best_configurations: {
      ...(bestThroughput === null ? {} : { best_throughput: bestThroughput }),
      ...(bestLatency === null ? {} : { best_latency_p99: bestLatency }),
    },
    pareto_optimal: paretoOptimal(combos),
  };
}

/** The CSV: the wide per-value table, then best configurations, Pareto points and metadata. */
function sweepCsv(json: Record<string, unknown>, axis: SweepAxis): string {
  const combos = json.per_combination_metrics as SweepCombination[];
  const keys = [...new Set(combos.flatMap((c) => Object.keys(c.metrics)))];
  const stats = ['mean', 'std', 'min', 'max', 'cv'] as const;
  const head = [axis.name, ...keys.flatMap((k) => stats.map((s) => `${k}_${s}`))];
  const rows = combos.map((c) => {
    const cells = keys.flatMap((k) => {
      const m = c.metrics[k] as Partial<Record<string, number | null>> | undefined;
      return stats.map((s) => (m?.[s] === undefined || m[s] === null ? '' : String(m[s])));
    });
    return [String(c.parameters[axis.name]), ...cells].join(',');
  });
  const best = json.best_configurations as Record<string, Best>;
  const bestRows = Object.entries(best).map(
    ([name, b]) => `${name},${b.parameters[axis.name]},${b.metric},${b.unit}`,
  );
  const pareto = (json.pareto_optimal as Array<Record<string, number>>).map((p) => String(p[axis.name]));
  return [
    head.join(','),
    ...rows,
    '',
    'Best Configurations',
    `Configuration,${axis.name},Metric,Unit`,
    ...bestRows,
    '',
    'Pareto Optimal Points',
    axis.name,
    ...pareto,
    '',
    'Metadata',
    'Field,Value',
    'Aggregation Type,sweep',
    `Sweep Parameters,${axis.name}`,
    `Number of Combinations,${axis.values.length}`,
    `Number of Profile Runs,${json.num_profile_runs}`,
    `Number of Successful Runs,${json.num_successful_runs}`,
    '',
  ].join('\n');
}

/**
 * Writes the sweep aggregate into `dir` (created) and returns the console table.
 * @throws the file system error of a failed write.
 */
export async function writeSweepAggregate(dir: string, runs: SweepRuns): Promise<string> {
  const json = sweepAggregate(runs);
  await makeWritableDir(dir);
  await writeFile(join(dir, SWEEP_JSON_FILE_NAME), `${JSON.stringify(json, null, 2)}\n`);
  await writeFile(join(dir, SWEEP_CSV_FILE_NAME), sweepCsv(json, runs.axis));
  return sweepTable(
    json.per_combination_metrics as SweepCombination[],
    runs.axis,
    join(dir, SWEEP_JSON_FILE_NAME),
  );
}

const TABLE_COLUMNS: ReadonlyArray<[string, string]> = [
  ['request_throughput_avg', 'request_throughput'],
  ['output_token_throughput_avg', 'output_token_throughput'],
  ['time_to_first_token_p50', 'ttft_p50_ms'],
  ['time_to_first_token_p99', 'ttft_p99_ms'],
  ['inter_token_latency_p50', 'itl_p50_ms'],
  ['request_latency_p99', 'request_latency_p99_ms'],
  ['error_request_count_avg', 'error_request_count'],
];

function sweepTable(combos: readonly SweepCombination[], axis: SweepAxis, path: string): string {
  const table = new Table({
    head: [axis.name, ...TABLE_COLUMNS.map(([, h]) => h)],
    style: { head: [], border: [], compact: true },
  });
  for (const c of combos) {
    table.push([
      String(c.parameters[axis.name]),
      ...TABLE_COLUMNS.map(([k]) => {
        const m = c.metrics[k]?.mean;
        return m === undefined ? 'N/A' : m.toLocaleString('en-US', { maximumFractionDigits: 2 });
      }),
    ]);
  }
  return `tokenload | Sweep (${path}; means across the runs of each value)\n${table.toString()}`;
}
