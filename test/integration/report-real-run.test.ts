/**
 * Issue "Reports people would rather look at than read", from a real run: the stratified Bailian
 * sample replayed at 10× against the built-in simulator, then report.html, PNG plots and a
 * comparison built from its artifact directory, checked as a user would read them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { compareRuns } from '../../src/report/compare.js';
import { writeReport } from '../../src/report/html.js';
import { loadRun } from '../../src/report/load-run.js';
import { writePlots } from '../../src/report/png.js';
import { runProfile } from '../../src/run/profile.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';

const TRACE = 'examples/traces/bailian_traceA_stratified_head24.jsonl';

function config(artifactDir: string): ProfileConfig {
  return simulatorReplayConfig(artifactDir, TRACE, 10, {
    commandLine: 'tokenload profile (report-real-run test)',
  });
}

/** Rows of the console table as [label, ...cells]; wrapped labels are joined with a space. */
function consoleRows(text: string): string[][] {
  const rows: string[][] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('│')) continue;
    const cells = line
      .split('│')
      .slice(1, -1)
      .map((c) => c.trim());
    const last = rows.at(-1);
    if (last !== undefined && cells.slice(1).every((c) => c === '')) last[0] = `${last[0]} ${cells[0]}`;
    else rows.push(cells);
  }
  return rows.filter((r) => r[0] !== 'Metric');
}

/** Rows of the report's summary table as [label, ...cells]. */
function htmlSummaryRows(html: string): string[][] {
  const section = html.slice(html.indexOf('id="summary"'), html.indexOf('id="errors"'));
  return [...section.matchAll(/<tr>(<td.*?)<\/tr>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((c) => c[1] ?? ''),
  );
}

let dir = '';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tokenload-report-run-'));
  const silent = { info: () => undefined, warn: () => undefined };
  await runProfile(config(dir), { log: silent, stopSignal: new AbortController().signal });
});

test('the run reads back with 24 requests on a relative time axis starting at 0', async () => {
  const run = await loadRun(dir);
  assert.equal(run.requests.length, 24);
  assert.equal(Math.min(...run.requests.map((r) => r.startS)), 0);
  // 24 rows over 28 s of trace at 10×: the last request starts within a few seconds.
  assert.ok(Math.max(...run.requests.map((r) => r.startS)) < 6);
  for (const r of run.requests) {
    assert.equal(r.error, null);
    assert.ok(r.endS > r.startS);
    assert.ok((r.ttftMs ?? 0) > 0);
  }
});

test('report.html shows the same summary rows and values as the console output', async () => {
  const report = await writeReport(dir);
  const html = readFileSync(report.path, 'utf8');
  const console = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.deepEqual(htmlSummaryRows(html), consoleRows(console));
  assert.match(html, /data-chart-id="ttft-over-time" data-points="24"/);
  assert.match(html, /No failed requests\./);
  assert.match(html, /tokenload profile \(report-real-run test\)/);
});

/** The chart specs inlined in a report page. */
function chartSpecs(html: string): { id: string; group?: string; option: Record<string, unknown> }[] {
  const open = '<script type="application/json" id="tokenload-charts">';
  const start = html.indexOf(open) + open.length;
  return JSON.parse(html.slice(start, html.indexOf('</script>', start)));
}

/** The p50/p90/p99 marks of a CDF chart's first line. */
function cdfMarks(option: Record<string, unknown>): Record<string, number> {
  const series = option.series as { markLine: { data: { name: string; xAxis: number }[] } }[];
  return Object.fromEntries((series[0]?.markLine.data ?? []).map((d) => [d.name, d.xAxis]));
}

/** A summary metric's p50/p90/p99, to 5 significant digits as charts draw them. */
function summaryMarks(summary: Record<string, Record<string, number>>, tag: string): Record<string, number> {
  const m = summary[tag] ?? {};
  const five = (v: number | undefined) => Number.parseFloat((v ?? Number.NaN).toPrecision(5));
  return { p50: five(m.p50), p90: five(m.p90), p99: five(m.p99) };
}

test('report.html leads with the console lines: the load and the client-health verdict', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const console = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8').split('\n');
  const load = console.find((l) => l.startsWith('Load: '));
  const health = console.find((l) => l.startsWith('Client health: '));
  assert.ok(load !== undefined && health !== undefined, console.slice(0, 6).join('\n'));
  const lead = html.slice(html.indexOf('<section id="lead">'), html.indexOf('<section id="summary">'));
  const lines = [...lead.matchAll(/<div class="lead [a-z]+">([^<]*)<\/div>/g)].map((m) =>
    (m[1] ?? '').replaceAll('&#39;', "'").replaceAll('&quot;', '"').replaceAll('&amp;', '&'),
  );
  assert.deepEqual(lines, [load, health]);
  assert.ok(html.indexOf('id="lead"') < html.indexOf('id="summary"'), 'before the summary table');
});

test('the CDFs mark the summary p50/p90/p99; the per-chunk ICL CDF sits right after the ITL CDF', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  const specs = chartSpecs(html);
  const ids = specs.map((c) => c.id);
  assert.equal(ids.indexOf('icl-cdf'), ids.indexOf('itl-cdf') + 1);
  const tags: Record<string, string> = {
    'ttft-cdf': 'time_to_first_token',
    'itl-cdf': 'inter_token_latency',
    'icl-cdf': 'inter_chunk_latency',
    'latency-cdf': 'request_latency',
  };
  for (const [id, tag] of Object.entries(tags)) {
    const spec = specs.find((c) => c.id === id);
    assert.ok(spec !== undefined, id);
    assert.deepEqual(cdfMarks(spec.option), summaryMarks(summary, tag), id);
  }
  const title = specs.find((c) => c.id === 'icl-cdf')?.option.title as { subtext: string } | undefined;
  const subtext = (title?.subtext ?? '').replaceAll(',', '');
  assert.ok(subtext.startsWith(`${summary.inter_chunk_latency.count} gaps between chunks`), subtext);
});

test('the time charts share one x axis, from 0 to past the last response', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const run = await loadRun(dir);
  const timed = chartSpecs(html).filter((c) => c.group === 'time');
  assert.ok(timed.length >= 6, timed.map((c) => c.id).join(', '));
  const ranges = timed.map((c) => {
    const x = c.option.xAxis as { min: number; max: number };
    return [x.min, x.max];
  });
  const lastEndS = Math.max(...run.requests.map((r) => r.endS));
  for (const r of ranges) assert.deepEqual(r, ranges[0]);
  assert.equal(ranges[0]?.[0], 0);
  assert.ok((ranges[0]?.[1] ?? 0) >= lastEndS && (ranges[0]?.[1] ?? 0) < lastEndS + 1);
});

test('plot writes one PNG per chart into <dir>/plots', async () => {
  const result = await writePlots(dir, { widthPx: 600, heightPx: 300, scale: 1 });
  const files = readdirSync(join(dir, 'plots')).sort();
  assert.deepEqual(files, result.files.map((f) => `${f.id}.png`).sort());
  assert.ok(files.includes('output-throughput-over-time.png'));
  assert.ok(files.includes('isl-vs-ttft.png'));
});

test('comparing the run with itself shows zero deltas and 1.00x ratios', async () => {
  const out = join(dir, 'compare.html');
  const r = await compareRuns([dir, dir], out);
  const ttft = r.table.split('\n').find((l) => l.includes('TTFT p99')) ?? '';
  assert.match(ttft, / 0\.00 │ 1\.00x │$/);
  assert.ok(r.htmlBytes > 1_000_000);
});
