/**
 * The page shell shared by `report.html` and `compare.html`: inline CSS, the inlined echarts bundle,
 * the chart options as JSON, and a boot script that renders every chart and then publishes
 * `window.__TOKENLOAD_REPORT_READY = {charts, points}` (points actually drawn, per chart id). The
 * page loads nothing from the network.
 */
import type { ChartSpec } from './chart-base.js';
import { echartsBrowserSource } from './echarts-source.js';
import { escapeHtml, jsonForScript, scriptSource } from './html-text.js';

const CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; margin: 0; color: #222; background: #f4f5f7; }
header { background: #1f2a44; color: #fff; padding: 16px 28px; }
header h1 { margin: 0 0 4px; font-size: 20px; }
header .meta { opacity: .85; font-size: 13px; word-break: break-all; }
main { padding: 16px 28px 40px; max-width: 1600px; margin: 0 auto; }
section { background: #fff; border-radius: 6px; box-shadow: 0 1px 2px rgba(0,0,0,.08); padding: 12px 18px; margin: 14px 0; }
h2 { font-size: 16px; margin: 4px 0 10px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 10px; border-bottom: 1px solid #e6e8eb; }
th { text-align: right; background: #f7f8fa; } th:first-child, td:first-child, th.text { text-align: left; }
td { text-align: right; white-space: nowrap; }
td.text { text-align: left; white-space: normal; }
.pos { color: #b42318; } .neg { color: #067647; }
.warn { background: #fff8e6; border-left: 4px solid #f5a524; padding: 6px 10px; margin: 6px 0; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(620px, 1fr)); gap: 14px; }
.chart { height: 400px; background: #fff; border-radius: 6px; box-shadow: 0 1px 2px rgba(0,0,0,.08); }
pre { background: #f7f8fa; padding: 10px; overflow: auto; font-size: 12px; }
.muted { color: #667; }
.lead { padding: 4px 10px; margin: 4px 0; border-left: 4px solid #c5cad3; font-size: 15px; }
.lead.ok { border-color: #12b76a; } .lead.warn { border-color: #f5a524; background: #fff8e6; }
ul.evidence { margin: 0 0 6px 14px; padding-left: 14px; color: #445; font-size: 13px; }
.lead.bad { border-color: #d92d20; background: #fef3f2; font-weight: 600; }
`;

const BOOT = `
(function () {
  var specs = JSON.parse(document.getElementById('tokenload-charts').textContent);
  var points = {};
  var instances = [];
  var groups = {};
  specs.forEach(function (spec) {
    var el = document.getElementById('chart-' + spec.id);
    var chart = echarts.init(el, null, { renderer: 'canvas' });
    chart.setOption(spec.option);
    if (spec.group) { chart.group = spec.group; groups[spec.group] = true; }
    instances.push(chart);
    var drawn = 0;
    (chart.getOption().series || []).forEach(function (s) { drawn += (s.data || []).length; });
    points[spec.id] = drawn;
  });
  // Charts of one group (the run's time axis) zoom and show tooltips together.
  Object.keys(groups).forEach(function (g) { echarts.connect(g); });
  window.addEventListener('resize', function () { instances.forEach(function (c) { c.resize(); }); });
  window.__TOKENLOAD_REPORT_READY = { charts: specs.length, points: points };
})();
`;

/** The chart container of one chart: `data-points` carries the number of points it draws. */
export function chartDiv(chart: ChartSpec): string {
  const id = escapeHtml(chart.id);
  return `<div class="chart" id="chart-${id}" data-chart-id="${id}" data-points="${chart.points}" role="img" aria-label="${escapeHtml(chart.title)}"></div>`;
}

/** A grid section holding every chart, or a note when there is none. */
export function chartsSection(charts: readonly ChartSpec[]): string {
  const body =
    charts.length === 0
      ? '<p class="muted">No chartable data in this run.</p>'
      : `<div class="grid">${charts.map(chartDiv).join('\n')}</div>`;
  return `<section><h2>Charts</h2>${body}</section>`;
}

/** Parts of a page. */
export interface PageParts {
  /** Document and header title. */
  title: string;
  /** Escaped HTML shown under the header title. */
  metaHtml: string;
  /** Sections (already HTML) placed before the charts. */
  sectionsHtml: string[];
  charts: readonly ChartSpec[];
  /** Sections placed after the charts. */
  trailingHtml?: string[];
}

/** The complete, self-contained HTML document. */
export function renderPage(parts: PageParts): string {
  const specs = parts.charts.map((c) => ({ id: c.id, points: c.points, option: c.option, group: c.group }));
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(parts.title)}</title>`,
    `<style>${CSS}</style></head><body>`,
    `<header><h1>${escapeHtml(parts.title)}</h1><div class="meta">${parts.metaHtml}</div></header>`,
    '<main>',
    ...parts.sectionsHtml,
    chartsSection(parts.charts),
    ...(parts.trailingHtml ?? []),
    '</main>',
    `<script>${scriptSource(echartsBrowserSource())}</script>`,
    `<script type="application/json" id="tokenload-charts">${jsonForScript(specs)}</script>`,
    `<script>${BOOT}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
