/**
 * The multi-run aggregate (`--num-profile-runs N`): `profile_export_aiperf_aggregate.json` and
 * `.csv` in `aggregate/` (a sweep: `aggregate/<value>/`), AIPerf's confidence aggregate (its
 * multi-run-confidence tutorial and json-export-schema.md): `metadata` (`aggregation_type`
 * `confidence`, run counts, failed runs, the confidence level, the run labels) and, per metric
 * statistic (`time_to_first_token_p99`, `request_throughput_avg`), the mean across the completed
 * runs with its std, min, max, cv, standard error and Student's t interval (metrics/confidence.ts).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Table from 'cli-table3';
import { type AcrossRuns, acrossRuns } from '../metrics/confidence.js';
import { isStatsSummary, type MetricSummary } from '../metrics/summary.js';
import { makeWritableDir } from '../util/make-dir.js';
import type { RunOutcome } from './finish.js';

/** File names of the multi-run aggregate. */
export const AGGREGATE_JSON_FILE_NAME = 'profile_export_aiperf_aggregate.json';
export const AGGREGATE_CSV_FILE_NAME = 'profile_export_aiperf_aggregate.csv';

/** The aggregate file's own schema version (AIPerf versions it apart from the summary's). */
export const AGGREGATE_SCHEMA_VERSION = '1.0';

/** The statistics of a per-record metric that are aggregated across runs (`<tag>_<stat>`). */
const RECORD_STATS = ['avg', 'min', 'max', 'p50', 'p90', 'p99'] as const;

/** One finished run of a multi-run or sweep, as the aggregates read it. */
export interface FinishedRun {
  /** `run_0001`. */
  runLabel: string;
  outcome: RunOutcome;
}

/** The runs an aggregate leaves out, with why (AIPerf's `failed_runs`). */
export interface FailedRun {
  label: string;
  error: string;
}

/**
 * Each metric statistic of a run, keyed `<tag>_<stat>`: `avg`, `min`, `max`, `p50`, `p90`, `p99`
 * of a per-record metric, `avg` of a run-level one.
 */
export function statValues(
  metrics: Partial<Record<string, MetricSummary>>,
): Map<string, { value: number; unit: string }> {
  const out = new Map<string, { value: number; unit: string }>();
  for (const [tag, m] of Object.entries(metrics)) {
    if (m === undefined) continue;
    if (!isStatsSummary(m)) {
      out.set(`${tag}_avg`, { value: m.avg, unit: m.unit });
      continue;
    }
    const record = m as unknown as Record<string, number | undefined>;
    for (const stat of RECORD_STATS) {
      const value = record[stat];
      if (typeof value === 'number') out.set(`${tag}_${stat}`, { value, unit: m.unit });
    }
  }
  return out;
}

/** The runs that completed (they count) and the others with their reason. */
export function splitRuns(runs: readonly FinishedRun[]): { ok: FinishedRun[]; failed: FailedRun[] } {
  const ok = runs.filter((r) => r.outcome.status.status === 'completed');
  const failed = runs
    .filter((r) => r.outcome.status.status !== 'completed')
    .map((r) => ({ label: r.runLabel, error: r.outcome.status.reason ?? r.outcome.status.status }));
  return { ok, failed };
}

/**
 * Each statistic across `runs` at confidence `level`: the full block with 2 or more values, the
 * mean and unit alone with one (AIPerf's single-trial sweep entry).
 */
export function metricsAcross(
  runs: readonly FinishedRun[],
  level: number,
): Record<string, AcrossRuns | { mean: number; unit: string }> {
  const values = new Map<string, { values: number[]; unit: string }>();
  for (const run of runs) {
    for (const [key, v] of statValues(run.outcome.summary.metrics)) {
      const slot = values.get(key) ?? { values: [], unit: v.unit };
      slot.values.push(v.value);
      values.set(key, slot);
    }
  }
  const out: Record<string, AcrossRuns | { mean: number; unit: string }> = {};
  for (const [key, { values: vs, unit }] of values) {
    out[key] = vs.length >= 2 ? acrossRuns(vs, level, unit) : { mean: vs[0] as number, unit };
  }
  return out;
}

/**
 * Writes the confidence aggregate of `runs` into `dir` (created) and returns the JSON path and the
 * statistics written. With
 * fewer than 2 completed runs there is no interval: `metrics` is empty and `metadata.note` says why.
 * @throws the file system error of a failed write.
 */
export async function writeConfidenceAggregate(
  dir: string,
  runs: readonly FinishedRun[],
  level: number,
): Promise<{ path: string; metrics: Record<string, AcrossRuns> }> {
  const { ok, failed } = splitRuns(runs);
  const metrics = ok.length >= 2 ? (metricsAcross(ok, level) as Record<string, AcrossRuns>) : {};
  const json = {
    schema_version: AGGREGATE_SCHEMA_VERSION,
    metadata: {
      aggregation_type: 'confidence',
      num_profile_runs: runs.length,
      num_successful_runs: ok.length,
      failed_runs: failed,
      confidence_level: level,
      run_labels: runs.map((r) => r.runLabel),
      ...(ok.length >= 2
        ? {}
        : { note: `${ok.length} run(s) completed: a confidence interval needs at least 2` }),
    },
    metrics,
  };
  await makeWritableDir(dir);
  const path = join(dir, AGGREGATE_JSON_FILE_NAME);
  await writeFile(path, `${JSON.stringify(json, null, 2)}\n`);
  const cols = ['mean', 'std', 'min', 'max', 'cv', 'se', 'ci_low', 'ci_high', 't_critical'] as const;
  const rows = Object.entries(metrics).map(([key, m]) =>
    [key, ...cols.map((c) => (m[c] === null ? '' : String(m[c]))), m.unit].join(','),
  );
  await writeFile(
    join(dir, AGGREGATE_CSV_FILE_NAME),
    `${['Metric', ...cols, 'unit'].join(',')}\n${rows.join('\n')}\n`,
  );
  return { path, metrics };
}

const TABLE_KEYS: readonly string[] = [
  'request_throughput_avg',
  'output_token_throughput_avg',
  'time_to_first_token_p50',
  'time_to_first_token_p99',
  'inter_token_latency_p50',
  'request_latency_p99',
];

/** The console's table of a few statistics across the runs: mean, interval and cv. */
export function confidenceTable(
  metrics: Readonly<Record<string, AcrossRuns>>,
  level: number,
  title: string,
): string {
  const fmt = (v: number): string => v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  const table = new Table({
    head: ['statistic', 'unit', 'mean', `${Math.round(level * 1000) / 10} % CI`, 'cv'],
    style: { head: [], border: [], compact: true },
  });
  for (const key of TABLE_KEYS) {
    const m = metrics[key];
    if (m === undefined) continue;
    table.push([
      key,
      m.unit,
      fmt(m.mean),
      `${fmt(m.ci_low)} – ${fmt(m.ci_high)}`,
      m.cv === null ? 'N/A' : m.cv.toFixed(3),
    ]);
  }
  return `${title}\n${table.toString()}`;
}
