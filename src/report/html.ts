/**
 * The single-run HTML report: one self-contained file (echarts inlined, no network access) with the
 * run's header facts, the console's lead lines (how the run ended, its load, the tokenizer, the
 * client and server verdicts, connections, start-up, the usage check), the console's summary table,
 * steady state against the whole run, tails that count failures, errors, warnings, the prefix
 * cache, the server's metrics, every chart of
 * {@link buildRunCharts} and the run configuration.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildRunCharts } from './charts.js';
import { gpuSection } from './charts-gpu.js';
import { serverSection } from './charts-server.js';
import { steadyStateSection, tailsSection } from './html-analysis.js';
import { renderPage } from './html-page.js';
import {
  cacheSection,
  configSection,
  errorsSection,
  summarySection,
  warningsSection,
} from './html-sections.js';
import { escapeHtml } from './html-text.js';
import { leadSection } from './lead.js';
import { loadRun } from './load-run.js';
import type { RunData } from './types.js';

/** Default file name of the report, inside the artifact directory. */
export const REPORT_FILE_NAME = 'report.html';

function configString(run: RunData, key: string): string | undefined {
  const value = run.summary?.inputConfig?.[key];
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.join(', ');
  return value === undefined || value === null ? undefined : String(value);
}

function metaHtml(run: RunData): string {
  const failed = run.timeline?.failed ?? run.requests.filter((r) => r.error !== null).length;
  const total = run.timeline?.count ?? run.requests.length;
  const sampled =
    total > run.requests.length
      ? `; per-request charts drawn from an evenly spaced sample of ${run.requests.length.toLocaleString('en-US')}`
      : '';
  const facts: [string, string | undefined][] = [
    ['model', configString(run, 'models')],
    // The server measured: with --simulator, the simulator's own address (the summary names it).
    ['server', configString(run, 'url')],
    ['endpoint', configString(run, 'endpointType')],
    ['dataset', configString(run, 'inputFile')],
    ['started', run.summary?.startTime ?? undefined],
    ['requests', `${total.toLocaleString('en-US')} (${failed.toLocaleString('en-US')} failed)${sampled}`],
    ['artifacts', run.dir],
  ];
  const shown = facts.filter((f): f is [string, string] => f[1] !== undefined);
  const line = shown.map(([k, v]) => `<b>${k}</b> ${escapeHtml(v)}`).join(' &nbsp;·&nbsp; ');
  const cli = configString(run, 'commandLine');
  return cli === undefined ? line : `${line}<br><code>${escapeHtml(cli)}</code>`;
}

/**
 * The report HTML of `run`. Each chart container carries `data-points="<n>"`; after rendering, the
 * page sets `window.__TOKENLOAD_REPORT_READY = {charts, points}`.
 * @throws {Error} when the echarts package is not installed.
 */
export function renderReportHtml(run: RunData): string {
  return renderPage({
    title: 'tokenload report',
    metaHtml: metaHtml(run),
    sectionsHtml: [
      leadSection(run.summary),
      summarySection(run),
      steadyStateSection(run),
      tailsSection(run),
      errorsSection(run),
      warningsSection(run),
      cacheSection(run),
      serverSection(run),
      gpuSection(run),
    ],
    charts: buildRunCharts(run),
    trailingHtml: [configSection(run)],
  });
}

/** What {@link writeReport} wrote. */
export interface WrittenReport {
  path: string;
  bytes: number;
  /** Wall time of loading the artifacts, building and writing the page, ms. */
  ms: number;
}

/**
 * Reads the run in `artifactDir` and writes its report to `outputPath` (default
 * `artifactDir/report.html`).
 * @throws {RunLoadError} when the run cannot be read; the file system error of a failed write.
 */
export async function writeReport(artifactDir: string, outputPath?: string): Promise<WrittenReport> {
  const started = performance.now();
  const html = renderReportHtml(await loadRun(artifactDir));
  const path = outputPath ?? join(artifactDir, REPORT_FILE_NAME);
  await writeFile(path, html);
  return { path, bytes: Buffer.byteLength(html), ms: performance.now() - started };
}
