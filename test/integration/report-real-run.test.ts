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
import { compareRuns } from '../../src/report/compare.js';
import { writeReport } from '../../src/report/html.js';
import { loadRun } from '../../src/report/load-run.js';
import { writePlots } from '../../src/report/png.js';
import type { ProfileConfig } from '../../src/run/config.js';
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
