/**
 * Issue 26 (`tokenload search`), its final report: `tokenload report DIR` on a search folder (one
 * holding `search_history.json`) writes `DIR/report.html` with the answer on top, one chart per SLO
 * against the load (threshold line, boundary marked), and the probes table linking each probe's
 * folder. The histories are written by the test (test/helpers/search-history.ts), as the search
 * leaves them; what is checked is what the page shows of them.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import {
  BRACKETED,
  bracketedBoundary,
  type ProbeInput,
  probeFolder,
  SLAS,
  searchHistory,
  writeSearchFolder,
} from '../helpers/search-history.js';

interface Series {
  name: string;
  type: string;
  data: unknown[];
  endLabel?: { formatter: string };
  markLine?: { data: { name: string; xAxis: number }[] };
  markArea?: { data: [{ xAxis: number }, { xAxis: number }][] };
}

interface Chart {
  id: string;
  option: {
    title: { text: string; subtext: string };
    xAxis: { type: string; name: string };
    series: Series[];
  };
}

interface Page {
  html: string;
  charts: Chart[];
  answer: string;
  rows: { folder: string; status: string; href: string; html: string }[];
}

function textOf(html: string): string {
  return html
    .replace(/<[^>]+>/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/\s+/g, ' ');
}

function readPage(dir: string): Page {
  const html = readFileSync(join(dir, 'report.html'), 'utf8');
  const json = /<script type="application\/json" id="tokenload-charts">(.*?)<\/script>/s.exec(html)?.[1];
  assert.ok(json !== undefined, 'the page carries its charts');
  const answer = /<section id="answer">(.*?)<\/section>/s.exec(html)?.[1] ?? '';
  const rows = [...html.matchAll(/<tr data-probe="([^"]+)" data-status="([^"]+)">(.*?)<\/tr>/gs)].map(
    (m) => ({
      folder: m[1] as string,
      status: m[2] as string,
      href: /<a href="([^"]+)"/.exec(m[3] as string)?.[1] ?? '',
      html: m[3] as string,
    }),
  );
  return { html, charts: JSON.parse(json) as Chart[], answer: textOf(answer), rows };
}

async function report(dir: string): Promise<Page> {
  const r = await runCliInProcess(['report', dir]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(existsSync(join(dir, 'report.html')));
  return readPage(dir);
}

function seriesNamed(chart: Chart, prefix: string): Series | undefined {
  return chart.option.series.find((s) => s.name.startsWith(prefix));
}

function xs(series: Series | undefined): number[] {
  return (series?.data ?? []).map((d) => ((d as { value: [number, number] }).value as [number, number])[0]);
}

test('a point boundary: the answer, a chart per SLO with its threshold and the boundary line, the probes table with links', async () => {
  const boundary = bracketedBoundary('point', 21.5);
  const dir = writeSearchFolder(searchHistory({ probes: BRACKETED, boundary }), BRACKETED);
  const page = await report(dir);

  // The answer: largest pass, first fail and what it breached, the boundary as a point, the binding SLO, the fit.
  assert.match(
    page.answer,
    new RegExp(`Largest load meeting every SLO: 20 requests/s \\(${probeFolder(5)}\\)`),
  );
  assert.match(
    page.answer,
    new RegExp(
      `First failing load: 24 requests/s \\(${probeFolder(4)}\\): Time to First Token p95 observed 640 ms, threshold < 500 ms`,
    ),
  );
  assert.match(page.answer, /Boundary: 20 requests\/s \(a point\)/);
  assert.match(page.answer, /Binding SLO: Time to First Token p95 < 500 ms/);
  assert.match(page.answer, /Fitted boundary: about 21\.5 requests\/s/);
  assert.match(
    page.answer,
    new RegExp(`Stopped: the precision asked for was reached; ${BRACKETED.length} of at most 12 probes`),
  );
  assert.doesNotMatch(page.answer, /Incomplete|Not confirmed|Non-monotonic/);

  // One chart per SLO, on a log load axis (the range 1–100 spans 100×, said in the subtitle).
  assert.equal(page.charts.length, SLAS.length);
  assert.equal((page.html.match(/data-chart-id="slo-/g) ?? []).length, SLAS.length);
  SLAS.forEach((sla, i) => {
    const chart = page.charts[i] as Chart;
    assert.equal(chart.option.xAxis.type, 'log');
    assert.match(chart.option.title.subtext, /log load axis/);
    const threshold = seriesNamed(chart, 'threshold');
    assert.ok(threshold !== undefined, `${chart.id}: threshold series`);
    for (const d of threshold.data) assert.equal((d as [number, number])[1], sla.threshold);
    assert.match(threshold.endLabel?.formatter ?? '', new RegExp(`^${sla.op} ${sla.threshold}`));
    // The boundary: a vertical line at the largest pass, a dotted one at the fit; no cliff band.
    const lines = threshold.markLine?.data ?? [];
    assert.deepEqual(
      lines.map((l) => [l.name, l.xAxis]),
      [
        ['boundary', 20],
        ['fitted boundary', 21.5],
      ],
    );
    assert.equal(threshold.markArea, undefined);
    // Every probe drawn, by status (the two trials at 20/s both shown); the overloaded one ringed.
    const passLoads = BRACKETED.filter((p) => p.status === 'pass').map((p) => p.load);
    const failLoads = BRACKETED.filter((p) => p.status === 'fail').map((p) => p.load);
    assert.deepEqual(xs(seriesNamed(chart, 'pass')), passLoads);
    assert.deepEqual(xs(seriesNamed(chart, 'fail')), failLoads);
    assert.deepEqual(xs(seriesNamed(chart, 'server overloaded')), [32]);
    // Each probe's interval drawn as a bar at its load.
    const bars = seriesNamed(chart, '95 % interval')?.data as [number, number | string][];
    assert.equal(bars.filter((b) => b[1] === '-').length, BRACKETED.length);
  });

  // The probes table: one row per probe in order, linked to its report when it has one, else to its folder.
  assert.deepEqual(
    page.rows.map((r) => r.folder),
    BRACKETED.map((_, i) => probeFolder(i)),
  );
  BRACKETED.forEach((p, i) => {
    const row = page.rows[i];
    assert.equal(row?.status, p.status);
    assert.equal(row?.href, p.withReport === true ? `${probeFolder(i)}/report.html` : `${probeFolder(i)}/`);
    // Its observed TTFT with the interval around it.
    assert.match(textOf(row?.html ?? ''), new RegExp(` ${p.ttftMs?.toLocaleString('en-US')} \\[`));
  });
  assert.match(textOf(page.rows[2]?.html ?? ''), /overloaded: queue/);
});

test('a cliff: a range in the answer and a band between the last pass and the first fail', async () => {
  const boundary = { ...bracketedBoundary('cliff', null), confirmed: false, non_monotonic: true };
  const dir = writeSearchFolder(
    searchHistory({ probes: BRACKETED, boundary, range: { lo: 2, hi: 32 } }),
    BRACKETED,
  );
  const page = await report(dir);
  // The planner's caveats: an unconfirmed boundary and a non-monotonic margin.
  assert.match(page.answer, /Not confirmed: /);
  assert.match(page.answer, /Non-monotonic: /);
  assert.match(page.answer, /Boundary: a cliff between 20 requests\/s and 24 requests\/s/);
  assert.doesNotMatch(page.answer, /Fitted boundary/);
  for (const chart of page.charts) {
    // 32 / 2 < 20: a linear load axis.
    assert.equal(chart.option.xAxis.type, 'value');
    assert.doesNotMatch(chart.option.title.subtext, /log/);
    const threshold = seriesNamed(chart, 'threshold');
    assert.deepEqual(
      threshold?.markArea?.data.map(([a, b]) => [a.xAxis, b.xAxis]),
      [[20, 24]],
    );
    assert.equal(threshold?.markLine, undefined);
  }
});

test('a client-limited stop: its message stated first, the probe drawn as client-limited', async () => {
  const probes: ProbeInput[] = [
    ...BRACKETED.slice(0, 2),
    { load: 32, phase: 'bracket', status: 'client_limited', ttftMs: 250, itlMs: 16 },
  ];
  const message = 'the client sent 21.7 requests/s of the 32 asked (saturated); rerun with --workers 2';
  const dir = writeSearchFolder(
    searchHistory({
      probes,
      boundary: {
        swept_dim_path: 'request_rate',
        boundary_type: null,
        feasible_max: { value: 8, iteration_idx: 1 },
        infeasible_min: null,
        binding_constraint: null,
        fitted_boundary: null,
        relative_gap: null,
      },
      convergence_reason: 'client_limited',
      client_limit: {
        iteration_idx: 2,
        status: 'saturated',
        delivered_request_rate_per_s: 21.7,
        requested_load: 32,
        suggested_workers: 2,
        message,
      },
    }),
    probes,
  );
  const page = await report(dir);
  assert.ok(
    page.answer.trim().startsWith(`Answer Stopped by the client, not the server: ${message}`),
    page.answer,
  );
  assert.match(page.html, /<div class="lead bad">Stopped by the client/);
  assert.match(page.answer, /suggested: --workers 2/);
  assert.match(page.answer, /Stopped: the client could not deliver/);
  assert.match(page.answer, /Boundary: not determined/);
  for (const chart of page.charts) assert.deepEqual(xs(seriesNamed(chart, 'client-limited')), [32]);
  assert.equal(page.rows[2]?.status, 'client_limited');
});

test('an interrupted search (no convergence reason, no boundary type) renders as incomplete', async () => {
  const probes = BRACKETED.slice(0, 3);
  const dir = writeSearchFolder(
    searchHistory({
      probes,
      boundary: {
        swept_dim_path: 'request_rate',
        boundary_type: null,
        feasible_max: { value: 8, iteration_idx: 1 },
        infeasible_min: null,
        binding_constraint: null,
        fitted_boundary: null,
        relative_gap: null,
      },
      convergence_reason: null,
    }),
    probes,
  );
  const page = await report(dir);
  assert.match(page.answer, /^\s*Answer Incomplete search: .* after 3 probes/);
  assert.match(page.answer, /Largest load meeting every SLO so far: 8 requests\/s/);
  assert.match(page.answer, /Boundary: not known yet/);
  for (const chart of page.charts) {
    const threshold = seriesNamed(chart, 'threshold');
    assert.equal(threshold?.markLine, undefined);
    assert.equal(threshold?.markArea, undefined);
  }
  assert.equal(page.rows.length, 3);
});

test('a bad history exits 1 naming the file and the field; nothing is written', async () => {
  const history = searchHistory({ probes: BRACKETED, boundary: bracketedBoundary('point', null) });
  const iterations = history.iterations as Record<string, unknown>[];
  (iterations[3] as Record<string, unknown>).status = 'maybe';
  const dir = writeSearchFolder(history, BRACKETED);
  const r = await runCliInProcess(['report', dir]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /search_history\.json: field iterations\[3\]\.status: /);
  assert.ok(!existsSync(join(dir, 'report.html')));

  const noRange = searchHistory({ probes: [], boundary: null });
  delete (noRange.config as Record<string, unknown>).range;
  const r2 = await runCliInProcess(['report', writeSearchFolder(noRange, [])]);
  assert.equal(r2.code, 1);
  assert.match(r2.stderr, /search_history\.json: field config\.range: /);

  const notJson = writeSearchFolder({}, []);
  writeFileSync(join(notJson, 'search_history.json'), '{"schema_version": "1.0",');
  const r3 = await runCliInProcess(['report', notJson]);
  assert.equal(r3.code, 1);
  assert.match(r3.stderr, /search_history\.json: not JSON/);
});
