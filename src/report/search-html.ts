/**
 * The report of a `tokenload search` folder: one self-contained `report.html` (the single-run
 * report's page shell: echarts inlined, nothing loaded from the network) with the search's answer
 * on top ({@link searchLeadSection}), one chart per SLO against the load
 * ({@link buildSearchCharts}), the probes table (each probe's folder linked) and the search's
 * configuration. Its only input is `<dir>/search_history.json`; the probe folders are only linked.
 */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildSearchCharts } from './charts-search.js';
import { REPORT_FILE_NAME } from './html.js';
import { renderPage } from './html-page.js';
import { escapeHtml } from './html-text.js';
import {
  observationOf,
  readSearchHistory,
  SEARCH_HISTORY_FILE,
  type SearchHistory,
  type SearchIteration,
  type SearchSla,
} from './search-history.js';
import { searchLeadSection } from './search-lead.js';
import { figure, loadAxisName, metricName, opSign, slaText } from './search-text.js';

/** True when `dir` holds a search's history (`search_history.json`): its report is the search report. */
export function isSearchFolder(dir: string): boolean {
  return existsSync(join(dir, SEARCH_HISTORY_FILE));
}

const STATUS_CLASS: Record<SearchIteration['status'], string> = {
  pass: 'neg',
  fail: 'pos',
  client_limited: 'pos',
  interrupted: 'muted',
};

function td(html: string, text = false): string {
  return `<td${text ? ' class="text"' : ''}>${html}</td>`;
}

/** A text cell that does not wrap (a probe's folder). */
function tdNoWrap(html: string): string {
  return `<td class="text" style="white-space: nowrap">${html}</td>`;
}

/** The probe's folder, linked to its report when `probe-NN/report.html` exists, else to the folder. */
function probeLink(dir: string, folder: string): string {
  const hasReport = existsSync(join(dir, folder, REPORT_FILE_NAME));
  const href = hasReport ? `${folder}/${REPORT_FILE_NAME}` : `${folder}/`;
  return `<a href="${escapeHtml(encodeURI(href))}">${escapeHtml(folder)}</a>`;
}

function observedCell(it: SearchIteration, sla: SearchSla, index: number): string {
  const o = observationOf(it, sla, index);
  if (o === undefined || o.observed === null) return td('<span class="muted">–</span>');
  const iv = o.interval ?? null;
  const end = (v: number | null): string => (v === null ? '?' : figure(v));
  const range = iv === null ? '' : ` <span class="muted">[${end(iv.low)}, ${end(iv.high)}]</span>`;
  const cls = o.passed ? 'neg' : 'pos';
  return td(`<span class="${cls}">${escapeHtml(figure(o.observed))}</span>${range}`);
}

function attainmentCell(it: SearchIteration): string {
  const a = it.attainment ?? null;
  if (a === null) return td('<span class="muted">–</span>');
  const got = a.fraction === null ? '–' : figure(a.fraction);
  return td(
    `<span class="${a.passed ? 'neg' : 'pos'}">${escapeHtml(got)}</span> (≥ ${escapeHtml(figure(a.required))})`,
  );
}

function verdictText(
  v: { status: string; verdict?: string | null; reason?: string | null } | null | undefined,
): string {
  if (v === null || v === undefined) return '–';
  const more = v.verdict ?? v.reason ?? '';
  return more === '' ? v.status : `${v.status}: ${more}`;
}

function probeRow(dir: string, h: SearchHistory, it: SearchIteration): string {
  const note = it.client_note === null || it.client_note === undefined ? '' : ` (${it.client_note})`;
  const cells = [
    tdNoWrap(probeLink(dir, it.folder)),
    td(escapeHtml(figure(it.load))),
    td(escapeHtml(it.phase), true),
    td(it.trial === undefined ? '–' : String(it.trial)),
    td(`<span class="${STATUS_CLASS[it.status]}">${escapeHtml(it.status)}</span>`, true),
    ...h.config.sla_filters.map((sla, i) => observedCell(it, sla, i)),
    attainmentCell(it),
    td(escapeHtml(`${verdictText(it.client_health)}${note}`), true),
    td(escapeHtml(verdictText(it.server_verdict)), true),
    td(it.duration_s === null || it.duration_s === undefined ? '–' : escapeHtml(figure(it.duration_s))),
  ];
  return `<tr data-probe="${escapeHtml(it.folder)}" data-status="${it.status}">${cells.join('')}</tr>`;
}

/** The probes table, `#probes`: one row per probe, in the order the search ran them. */
export function probesSection(dir: string, h: SearchHistory): string {
  const slaHeads = h.config.sla_filters.map(
    (s) => `${metricName(s.metric_tag)} ${s.stat} ${opSign(s.op)} ${figure(s.threshold)} [95 % interval]`,
  );
  const head = [
    'Probe',
    loadAxisName(h.config.search_over),
    'Phase',
    'Trial',
    'Status',
    ...slaHeads,
    'Attainment',
    'Client',
    'Server',
    'Duration (s)',
  ];
  const th = head
    .map((x, i) => `<th${i === 0 || i === 2 || i === 4 ? ' class="text"' : ''}>${escapeHtml(x)}</th>`)
    .join('');
  const rows = h.iterations.map((it) => probeRow(dir, h, it)).join('\n');
  const body =
    h.iterations.length === 0
      ? '<p class="muted">No probe has finished yet.</p>'
      : `<table><thead><tr>${th}</tr></thead><tbody>\n${rows}\n</tbody></table>`;
  return `<section id="probes"><h2>Probes</h2>${body}</section>`;
}

function metaHtml(dir: string, h: SearchHistory): string {
  const c = h.config;
  const facts: [string, string][] = [
    ['search over', c.search_over],
    ['range', `${figure(c.range.lo)} – ${figure(c.range.hi)}`],
    ['SLOs', c.sla_filters.map(slaText).join('; ')],
  ];
  if (c.slo_attainment_fraction !== null && c.slo_attainment_fraction !== undefined)
    facts.push(['attainment', `≥ ${figure(c.slo_attainment_fraction)} of requests`]);
  facts.push(['folder', dir]);
  const line = facts.map(([k, v]) => `<b>${k}</b> ${escapeHtml(v)}`).join(' &nbsp;·&nbsp; ');
  return h.command === undefined ? line : `${line}<br><code>${escapeHtml(h.command)}</code>`;
}

function configSection(h: SearchHistory): string {
  const json = JSON.stringify({ tokenload_version: h.tokenload_version, config: h.config }, null, 2);
  return `<section id="search-config"><h2>Search configuration</h2><pre>${escapeHtml(json)}</pre></section>`;
}

/**
 * The search report's HTML. `dir` is where the page is written (probe links are relative to it).
 * @throws {Error} when the echarts package is not installed.
 */
export function renderSearchReportHtml(dir: string, h: SearchHistory): string {
  return renderPage({
    title: 'tokenload search report',
    metaHtml: metaHtml(dir, h),
    sectionsHtml: [searchLeadSection(h)],
    charts: buildSearchCharts(h),
    trailingHtml: [probesSection(dir, h), configSection(h)],
  });
}

/**
 * Reads `<dir>/search_history.json`, checks it, and writes the search report to `outputPath`
 * (default `<dir>/report.html`); returns the path written.
 * @throws {RunLoadError} (E_ARTIFACTS) when the history is missing or malformed: the message names the file and the field.
 * @throws the file system error of a failed write.
 */
export async function writeSearchReport(dir: string, outputPath?: string): Promise<string> {
  const history = await readSearchHistory(dir);
  const path = outputPath ?? join(dir, REPORT_FILE_NAME);
  await writeFile(path, renderSearchReportHtml(dir, history));
  return path;
}
