/**
 * The console report (AIPerf console exporter layout): a metrics table, an error table when requests
 * failed, warnings, and footer lines. Returns text; the CLI decides where it goes.
 */
import Table from 'cli-table3';
import { cacheCheckLine } from '../metrics/cache-check.js';
import { metricByTag } from '../metrics/registry.js';
import { isStatsSummary, type MetricSummary, type Summary } from '../metrics/summary.js';
import type { MetricDef } from '../metrics/types.js';
import { usageCheckLine } from '../metrics/usage-check.js';
import { p99Note } from './console-ci-note.js';
import { tailsBlock } from './console-tails.js';
import { formatConsoleNumber, metricLabel } from './format.js';
import { fromScheduleLine, fromScheduleRowsShown } from './from-schedule.js';

/** Paths shown in the footer, when the files were written. */
export interface ArtifactPaths {
  json?: string;
  csv?: string;
  jsonl?: string;
  inputs?: string;
  /** `profile_export_raw.jsonl` (`--export-level raw`). */
  raw?: string;
  /** `server_metrics_export.jsonl`, `.json` and `.csv` (`--server-metrics`, when written). */
  serverMetricsJsonl?: string;
  serverMetricsJson?: string;
  serverMetricsCsv?: string;
  /** `gpu_telemetry_export.jsonl`, `.json` and `.csv` (`--gpu-telemetry`, when written). */
  gpuTelemetryJsonl?: string;
  gpuTelemetryJson?: string;
  gpuTelemetryCsv?: string;
  /** `profile_export_aiperf_timeslices.json` and `.csv` (`--slice-duration`, when written). */
  timeslicesJson?: string;
  timeslicesCsv?: string;
}

/** The footer's label of each path, in the footer's order. */
const FOOTER_LABELS: ReadonlyArray<[keyof ArtifactPaths, string]> = [
  ['csv', 'CSV Export'],
  ['json', 'JSON Export'],
  ['jsonl', 'JSONL Export'],
  ['raw', 'Raw Records Export'],
  ['inputs', 'Inputs Export'],
  ['timeslicesJson', 'Timeslices'],
  ['timeslicesCsv', 'Timeslices CSV'],
  ['serverMetricsJson', 'Server Metrics JSON Export'],
  ['serverMetricsCsv', 'Server Metrics CSV Export'],
  ['serverMetricsJsonl', 'Server Metrics JSONL Export'],
  ['gpuTelemetryJson', 'GPU Telemetry JSON Export'],
  ['gpuTelemetryCsv', 'GPU Telemetry CSV Export'],
  ['gpuTelemetryJsonl', 'GPU Telemetry JSONL Export'],
];

/** What the console report needs. */
export interface ConsoleContext {
  summary: Summary;
  /** Endpoint-specific title part; default `LLM Metrics`. */
  title?: string;
  artifacts?: ArtifactPaths;
  /** The run's flat configuration (`tokenload_config`); its `concurrency` is named in the from-schedule line. */
  inputConfig?: Record<string, unknown>;
  /** The summary's other sections; `client_health.limits_ms.send_lag_p99` sets the from-schedule floor. */
  extra?: Record<string, unknown>;
  /** Lines printed right under the metrics table (the steady-state line). */
  afterTable?: readonly string[];
}

const COLUMNS = ['avg', 'min', 'max', 'p99', 'p90', 'p50', 'std'] as const;
const PLAIN_STYLE = { head: [], border: [], compact: true };

/** Row label; the unit moves to a second line when the header is longer than 30 characters. */
function rowLabel(def: MetricDef): string {
  const text = metricLabel(def);
  return def.header.length > 30 && text !== def.header ? `${def.header}\n(${def.unit})` : text;
}

function shown(tag: string): MetricDef | undefined {
  const def = metricByTag(tag);
  return def === undefined || def.flags.noConsole === true || def.flags.errorOnly === true ? undefined : def;
}

function rowCells(m: MetricSummary): string[] {
  if (!isStatsSummary(m)) return COLUMNS.map((c) => (c === 'avg' ? formatConsoleNumber(m.avg) : 'N/A'));
  return COLUMNS.map((c) => formatConsoleNumber(m[c]));
}

/** The client-health send-lag limit of the run (`client_health.limits_ms.send_lag_p99`), ms; 0 without one. */
function sendLagLimitMs(extra: Record<string, unknown> | undefined): number {
  const health = extra?.client_health as { limits_ms?: { send_lag_p99?: unknown } } | undefined;
  const limit = health?.limits_ms?.send_lag_p99;
  return typeof limit === 'number' && Number.isFinite(limit) ? limit : 0;
}

function metricsTable(summary: Summary, title: string, floorMs: number): string {
  const table = new Table({
    head: ['Metric', ...COLUMNS],
    colAligns: ['left', ...COLUMNS.map(() => 'right' as const)],
    style: PLAIN_STYLE,
  });
  const fromSchedule = fromScheduleRowsShown(summary.metrics, floorMs);
  const rows = Object.entries(summary.metrics)
    .flatMap(([tag, m]) => {
      const def = shown(tag) ?? (fromSchedule.has(tag) ? metricByTag(tag) : undefined);
      return def === undefined || m === undefined ? [] : [{ def, m }];
    })
    .sort((a, b) => a.def.displayOrder - b.def.displayOrder);
  for (const { def, m } of rows) table.push([rowLabel(def), ...rowCells(m)]);
  const note = p99Note(rows.flatMap(({ def, m }) => (isStatsSummary(m) ? [{ def, m }] : [])));
  return `tokenload | ${title}\n${table.toString()}${note === null ? '' : `\n${note}`}`;
}

function errorTable(summary: Summary): string | null {
  if (summary.errorSummary.length === 0) return null;
  const table = new Table({ head: ['Code', 'Type', 'Message', 'Count'], style: PLAIN_STYLE, wordWrap: true });
  for (const e of summary.errorSummary) table.push([String(e.code), e.type, e.message, String(e.count)]);
  return `tokenload | Error Summary\n${table.toString()}`;
}

function footer(summary: Summary, artifacts: ArtifactPaths): string[] {
  const duration = summary.metrics.benchmark_duration?.avg;
  const lines = [
    `Benchmark Duration: ${duration === undefined ? 'N/A' : `${formatConsoleNumber(duration)} sec`}`,
  ];
  for (const [key, label] of FOOTER_LABELS) {
    const path = artifacts[key];
    if (path !== undefined) lines.push(`${label}: ${path}`);
  }
  return lines;
}

/**
 * The console report text: `tokenload | <title>` table with columns `Metric | avg | min | max | p99 |
 * p90 | p50 | std` (rows by display order, `N/A` for missing values, run-level values in `avg`), an
 * the latency-from-the-schedule line when those rows are shown (./from-schedule.ts), an
 * `Error Summary` table when requests failed, the tails counting failures (console-tails.ts: before
 * everything when more than 5 % failed), warnings, the usage and prefix-cache check lines, then
 * footer lines. Ends with a newline.
 */
export function renderConsole(ctx: ConsoleContext): string {
  const cap = ctx.inputConfig?.concurrency;
  const floorMs = sendLagLimitMs(ctx.extra);
  const reason = fromScheduleLine(ctx.summary.metrics, typeof cap === 'number' ? cap : undefined, floorMs);
  const table = metricsTable(ctx.summary, ctx.title ?? 'LLM Metrics', floorMs);
  const tails = tailsBlock(ctx.summary);
  const under = [...(reason === null ? [] : [reason]), ...(ctx.afterTable ?? [])];
  const parts = [[table, ...under].join('\n')];
  if (tails?.leads === true) parts.unshift(tails.text);
  const errors = errorTable(ctx.summary);
  if (errors !== null) parts.push(errors);
  if (tails?.leads === false) parts.push(tails.text);
  for (const warning of ctx.summary.warnings) parts.push(`Warning: ${warning}`);
  const checks = [
    usageCheckLine(ctx.summary.usageCheck, ctx.summary.streamIntegrity?.usage_untrusted),
    cacheCheckLine(ctx.summary.cacheCheck),
  ];
  if (checks.some((l) => l !== null)) parts.push(checks.filter((l) => l !== null).join('\n'));
  parts.push(footer(ctx.summary, ctx.artifacts ?? {}).join('\n'));
  return `${parts.join('\n\n')}\n`;
}
