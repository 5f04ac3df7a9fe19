/**
 * `tokenload compare DIR_A DIR_B …`: a side-by-side console table of key metrics with the difference
 * and ratio of each run against the first, then each run's client and server verdicts and
 * steady-state window, and `compare.html` with overlaid CDFs of TTFT, ITL and
 * request latency.
 */
import { writeFile } from 'node:fs/promises';
import Table from 'cli-table3';
import { formatConsoleNumber } from '../export/format.js';
import type { ChartSpec } from './chart-base.js';
import { cdfChart, LATENCY_METRICS, metricValues } from './charts-latency.js';
import {
  type CompareRow,
  type CompareTextRow,
  compareRows,
  compareTextRows,
  delta,
  ratio,
  runNames,
} from './compare-rows.js';
import { renderPage } from './html-page.js';
import { htmlTable } from './html-sections.js';
import { escapeHtml } from './html-text.js';
import { loadRun } from './load-run.js';
import type { RunData } from './types.js';

/** Default output path of the comparison page. */
export const COMPARE_FILE_NAME = 'compare.html';

/** Signed number: `+12.35`, `-0.50`, `N/A`. */
export function formatDelta(value: number | undefined): string {
  if (value === undefined) return 'N/A';
  return `${value > 0 ? '+' : ''}${formatConsoleNumber(value)}`;
}

/** Ratio: `1.23x`, `N/A`. */
export function formatRatio(value: number | undefined): string {
  return value === undefined ? 'N/A' : `${value.toFixed(2)}x`;
}

/** Column letter of run `i`: A, B, … Z, then R27, R28, …. */
export function runLetter(i: number): string {
  return i < 26 ? String.fromCharCode(65 + i) : `R${i + 1}`;
}

/** Header cells: Metric, A (baseline), then `X`, `Δ X−A`, `X/A` for each later run X. */
export function compareHead(runCount: number): string[] {
  const rest = Array.from({ length: Math.max(0, runCount - 1) }, (_, k) => {
    const x = runLetter(k + 1);
    return [x, `Δ ${x}−A`, `${x}/A`];
  }).flat();
  return ['Metric', 'A', ...rest];
}

/** Legend lines `A = name (dir)`, one per run. */
export function runLegend(names: readonly string[], dirs: readonly string[]): string[] {
  return names.map(
    (n, i) => `${runLetter(i)} = ${n}${dirs[i] !== undefined && dirs[i] !== n ? ` (${dirs[i]})` : ''}`,
  );
}

/** Body cells of one row, matching {@link compareHead}. */
export function compareCells(row: CompareRow): string[] {
  const base = row.values[0];
  const rest = row.values
    .slice(1)
    .flatMap((v) => [formatConsoleNumber(v), formatDelta(delta(v, base)), formatRatio(ratio(v, base))]);
  return [row.metric.label, formatConsoleNumber(base), ...rest];
}

/**
 * Body cells of a row of words, matching {@link compareHead}: each later run's word, then `same` or
 * `changed` against A in its Δ column (`N/A` when either lacks it), nothing in its ratio column.
 */
export function compareTextCells(row: CompareTextRow): string[] {
  const base = row.values[0];
  const rest = row.values.slice(1).flatMap((v) => {
    const change = v === undefined || base === undefined ? 'N/A' : v === base ? 'same' : 'changed';
    return [v ?? 'N/A', change, ''];
  });
  return [row.label, base ?? 'N/A', ...rest];
}

/** Every body row of the table: the figures, then the words. */
function bodyCells(rows: readonly CompareRow[], textRows: readonly CompareTextRow[]): string[][] {
  return [...rows.map(compareCells), ...textRows.map(compareTextCells)];
}

/** The console table text (title, run legend, then the table); ends with a newline. */
export function renderCompareTable(
  legend: readonly string[],
  rows: readonly CompareRow[],
  textRows: readonly CompareTextRow[] = [],
): string {
  const head = compareHead(legend.length);
  const table = new Table({
    head,
    colAligns: head.map((_, i) => (i === 0 ? 'left' : 'right')),
    style: { head: [], border: [], compact: true },
  });
  for (const cells of bodyCells(rows, textRows)) table.push(cells);
  return `tokenload | Compare (baseline A)\n${legend.join('\n')}\n${table.toString()}\n`;
}

/** Overlaid CDF charts, one line per run, for TTFT, ITL and request latency (those with data). */
export function compareCharts(runs: readonly RunData[], names: readonly string[]): ChartSpec[] {
  return LATENCY_METRICS.flatMap((m) => {
    const chart = cdfChart(
      m,
      runs.map((run, i) => ({ name: names[i] ?? run.dir, values: metricValues(run.requests, m) })),
      { idPrefix: 'compare-' },
    );
    return chart === null ? [] : [chart];
  });
}

/** The self-contained comparison page. */
export function renderCompareHtml(runs: readonly RunData[], names: readonly string[]): string {
  const rows = compareRows(runs);
  const legend = runLegend(
    names,
    runs.map((r) => r.dir),
  );
  return renderPage({
    title: 'tokenload comparison',
    metaHtml: legend.map(escapeHtml).join('<br>'),
    sectionsHtml: [
      `<section id="compare"><h2>Key metrics (baseline A)</h2>${htmlTable(compareHead(runs.length), bodyCells(rows, compareTextRows(runs)))}</section>`,
    ],
    charts: compareCharts(runs, names),
  });
}

/** Result of {@link compareRuns}. */
export interface CompareResult {
  /** Console table text. */
  table: string;
  htmlPath: string;
  htmlBytes: number;
}

/**
 * Loads every run, writes the comparison page to `outputPath` and returns the console table.
 * @param dirs two or more artifact directories; the first is the baseline.
 * @throws {RunLoadError} when a run cannot be read; {@link Error} with fewer than two directories.
 */
export async function compareRuns(
  dirs: readonly string[],
  outputPath: string = COMPARE_FILE_NAME,
): Promise<CompareResult> {
  if (dirs.length < 2) throw new Error('compare needs at least two artifact directories');
  const runs = await Promise.all(dirs.map((d) => loadRun(d)));
  const names = runNames(dirs);
  const html = renderCompareHtml(runs, names);
  await writeFile(outputPath, html);
  const legend = runLegend(names, dirs);
  return {
    table: renderCompareTable(legend, compareRows(runs), compareTextRows(runs)),
    htmlPath: outputPath,
    htmlBytes: Buffer.byteLength(html),
  };
}
