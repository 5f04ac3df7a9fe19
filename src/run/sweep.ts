/**
 * Sweep summary: after one profile per `--concurrency` / `--request-rate` value, a combined table
 * (the latency–throughput curve a user plots first) written as `sweep_summary.json` and
 * `sweep_summary.csv` in the sweep folder, and returned as console text.
 */
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import Table from 'cli-table3';
import type { ProfileConfig } from '../config/resolve.js';
import type { MetricSummary } from '../metrics/summary.js';
import type { RunOutcome } from './finish.js';

/** The files a sweep writes in its folder, beside one value folder per run. */
export const SWEEP_SUMMARY_FILE_NAMES: readonly string[] = ['sweep_summary.json', 'sweep_summary.csv'];

/**
 * Whether `name` is a sweep's value folder name (`concurrency4`, `request_rate2.5`: the run's
 * stimulus name, timing/registry.ts `stimulusName`).
 */
export function isSweepValueFolder(name: string): boolean {
  return /^(concurrency\d+|request_rate\d[\d.e+-]*)$/.test(name);
}

/** One row of the sweep table. */
export interface SweepRow {
  concurrency: number | null;
  request_rate: number | null;
  request_throughput: number | null;
  output_token_throughput: number | null;
  ttft_p50_ms: number | null;
  ttft_p99_ms: number | null;
  itl_p50_ms: number | null;
  request_latency_p99_ms: number | null;
  error_request_count: number | null;
  artifact_dir: string;
}

function stat(m: MetricSummary | undefined, key: 'avg' | 'p50' | 'p99'): number | null {
  if (m === undefined) return null;
  const v = (m as unknown as Record<string, number | undefined>)[key];
  return v === undefined ? null : v;
}

/** Builds the sweep rows from the runs in order. */
export function sweepRows(runs: Array<{ config: ProfileConfig; outcome: RunOutcome }>): SweepRow[] {
  return runs.map(({ config, outcome }) => {
    const m = outcome.summary.metrics;
    return {
      concurrency: config.concurrency ?? null,
      request_rate: config.requestRate ?? null,
      request_throughput: stat(m.request_throughput, 'avg'),
      output_token_throughput: stat(m.output_token_throughput, 'avg'),
      ttft_p50_ms: stat(m.time_to_first_token, 'p50'),
      ttft_p99_ms: stat(m.time_to_first_token, 'p99'),
      itl_p50_ms: stat(m.inter_token_latency, 'p50'),
      request_latency_p99_ms: stat(m.request_latency, 'p99'),
      error_request_count: stat(m.error_request_count, 'avg'),
      artifact_dir: outcome.artifactDir,
    };
  });
}

/**
 * Writes `sweep_summary.json` and `.csv` next to the per-value folders and returns a console table.
 * @throws the file system error of a failed write.
 */
export async function writeSweepSummary(
  runs: Array<{ config: ProfileConfig; outcome: RunOutcome }>,
): Promise<string> {
  const rows = sweepRows(runs);
  const first = rows[0];
  if (first === undefined) return '';
  const dir = dirname(first.artifact_dir);
  const cols = Object.keys(first) as Array<keyof SweepRow>;
  const [jsonName, csvName] = SWEEP_SUMMARY_FILE_NAMES as [string, string];
  await writeFile(join(dir, jsonName), `${JSON.stringify({ runs: rows }, null, 2)}\n`);
  const csv = [cols.join(','), ...rows.map((r) => cols.map((c) => String(r[c] ?? '')).join(','))].join('\n');
  await writeFile(join(dir, csvName), `${csv}\n`);
  const table = new Table({ head: cols.slice(0, -1), style: { head: [], border: [], compact: true } });
  for (const r of rows) table.push(cols.slice(0, -1).map((c) => fmt(r[c])));
  return `tokenload | Sweep (${join(dir, csvName)})\n${table.toString()}`;
}

function fmt(v: string | number | null): string {
  if (v === null) return 'N/A';
  return typeof v === 'number' ? v.toLocaleString('en-US', { maximumFractionDigits: 2 }) : v;
}
