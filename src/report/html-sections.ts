/**
 * HTML sections of the single-run report: summary table, error summary, warnings and the run
 * configuration. Every function returns escaped HTML.
 */

import { metricLabel } from '../export/format.js';
import { fromScheduleLine } from '../export/from-schedule.js';
import { metricByTag } from '../metrics/registry.js';
import { escapeHtml } from './html-text.js';
import { type RepeatedRow, repeatedRows, SUMMARY_COLUMNS, summaryRows } from './summary-rows.js';
import type { ErrorSummaryRow, RequestPoint, RunData, RunSummary } from './types.js';

/** A `<table>` with a header row; cells are escaped; the first column is text. */
export function htmlTable(
  head: readonly string[],
  rows: readonly (readonly string[])[],
  textCols = 1,
): string {
  const th = head.map((h, i) => `<th${i < textCols ? ' class="text"' : ''}>${escapeHtml(h)}</th>`).join('');
  const tr = rows
    .map((row) => {
      const tds = row.map((c, i) => `<td${i < textCols ? ' class="text"' : ''}>${escapeHtml(c)}</td>`);
      return `<tr>${tds.join('')}</tr>`;
    })
    .join('\n');
  return `<table><thead><tr>${th}</tr></thead><tbody>\n${tr}\n</tbody></table>`;
}

function labelOf(tag: string): string {
  const def = metricByTag(tag);
  return def === undefined ? tag : metricLabel(def);
}

/** The console's line under the table when it shows the latency-from-the-schedule rows; '' otherwise. */
function fromScheduleNote(summary: RunSummary): string {
  const cap = summary.inputConfig?.concurrency;
  const line = fromScheduleLine(
    summary.metrics,
    typeof cap === 'number' ? cap : undefined,
    summary.sendLagLimitMs,
  );
  return line === null ? '' : `<p class="muted">${escapeHtml(line)}</p>`;
}

/** The note under the table naming a row left out as a repeat of another. */
function repeatNote(r: RepeatedRow): string {
  return `<p class="muted">${escapeHtml(`${labelOf(r.tag)}: left out, the same as ${labelOf(r.sameAs)} in every column (${r.why}).`)}</p>`;
}

/**
 * The console's metrics table, less the rows that repeat another row in every figure (each named in
 * a note under the table); a note when the summary JSON is missing.
 */
export function summarySection(run: RunData): string {
  const summary = run.summary;
  const repeats = summary === null ? [] : repeatedRows(summary.metrics);
  const left = new Set(repeats.map((r) => r.tag));
  const rows =
    summary === null
      ? []
      : summaryRows(summary.metrics, summary.sendLagLimitMs).filter((r) => !left.has(r.tag));
  const body =
    rows.length === 0 || summary === null
      ? '<p class="muted">No summary (profile_export_aiperf.json) in this directory.</p>'
      : htmlTable(
          ['Metric', ...SUMMARY_COLUMNS],
          rows.map((r) => [r.label, ...r.cells]),
        ) +
        fromScheduleNote(summary) +
        repeats.map(repeatNote).join('');
  return `<section id="summary"><h2>Summary</h2>${body}</section>`;
}

/** Error groups computed from the records, for runs without a summary file. */
export function errorGroups(requests: readonly RequestPoint[]): ErrorSummaryRow[] {
  const groups = new Map<string, ErrorSummaryRow>();
  for (const r of requests) {
    if (r.error === null) continue;
    const key = `${r.error.code}\u0000${r.error.type}`;
    const g = groups.get(key);
    if (g === undefined)
      groups.set(key, { code: r.error.code, type: r.error.type, message: r.error.message, count: 1 });
    else g.count += 1;
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || a.code - b.code);
}

/** Error summary table (Code, Type, Message, Count), or a one-line "no errors" note. */
export function errorsSection(run: RunData): string {
  const rows = run.summary?.errorSummary ?? errorGroups(run.requests);
  const body =
    rows.length === 0
      ? '<p class="muted">No failed requests.</p>'
      : htmlTable(
          ['Code', 'Type', 'Message', 'Count'],
          rows.map((e) => [String(e.code), e.type, e.message, String(e.count)]),
          3,
        );
  return `<section id="errors"><h2>Errors</h2>${body}</section>`;
}

/** The run's warnings, or nothing when there are none. */
export function warningsSection(run: RunData): string {
  const warnings = run.summary?.warnings ?? [];
  if (warnings.length === 0) return '';
  const items = warnings.map((w) => `<div class="warn">${escapeHtml(w)}</div>`).join('\n');
  return `<section id="warnings"><h2>Warnings</h2>${items}</section>`;
}

function count(value: number | null | undefined): string {
  return value === null || value === undefined ? 'N/A' : value.toLocaleString('en-US');
}

function share(value: number | null | undefined): string {
  return value === null || value === undefined ? 'N/A' : `${(value * 100).toFixed(1)} %`;
}

/**
 * The prefix cache: ideal (blocks sent earlier in the run) against the server's reported
 * `cached_tokens`, from the summary's `cache_check`; nothing when the run has none.
 */
export function cacheSection(run: RunData): string {
  const c = run.summary?.cacheCheck;
  if (c === null || c === undefined) return '';
  const rows = [
    [
      'ideal: blocks sent earlier in this run',
      count(c.requests_with_ideal),
      count(c.ideal_cached_tokens),
      count(c.ideal_prompt_tokens),
      share(c.ideal_hit_ratio),
    ],
    [
      'reported by the server (cached_tokens)',
      count(c.requests_reported),
      count(c.reported_cached_tokens),
      count(c.reported_prompt_tokens),
      share(c.reported_hit_ratio),
    ],
  ];
  const table = htmlTable(['', 'requests', 'cached tokens', 'prompt tokens', 'hit ratio'], rows);
  const over =
    c.over_reported === null
      ? '<p class="muted">Requests reporting more cached tokens than the ideal: not judged (see the warnings).</p>'
      : `<p class="muted">${count(c.over_reported)} requests reported more cached tokens than the ideal plus the slack (chat template overhead + max(16 tokens, 5 % of the prompt)).</p>`;
  return `<section id="prefix-cache"><h2>Prefix cache</h2>${table}${over}</section>`;
}

/** The redacted run configuration (`input_config`) as pretty JSON. */
export function configSection(run: RunData): string {
  const config = run.summary?.inputConfig;
  const body =
    config === null || config === undefined
      ? '<p class="muted">No run configuration recorded.</p>'
      : `<details open><summary>input_config</summary><pre>${escapeHtml(JSON.stringify(config, null, 2))}</pre></details>`;
  return `<section id="config"><h2>Run configuration</h2>${body}</section>`;
}
