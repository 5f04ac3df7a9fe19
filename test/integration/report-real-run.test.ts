/**
 * Issue "Reports people would rather look at than read", from a real run: the stratified Bailian
 * sample replayed at 10× against the built-in simulator, then report.html, PNG plots and a
 * comparison built from its artifact directory, checked as a user would read them.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { compareRuns } from '../../src/report/compare.js';
import { writeReport } from '../../src/report/html.js';
import { loadRun } from '../../src/report/load-run.js';
import { writePlots } from '../../src/report/png.js';
import { runProfile } from '../../src/run/profile.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';
import { consoleRows, htmlSummaryRows } from '../helpers/report-tables.js';

const TRACE = 'examples/traces/bailian_traceA_stratified_head24.jsonl';

function config(artifactDir: string): ProfileConfig {
  return simulatorReplayConfig(artifactDir, TRACE, 10, {
    commandLine: 'tokenload profile (report-real-run test)',
    sliceDurationSeconds: 1,
  });
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

/** Rows the report leaves out of a run without reasoning tokens, and the row each repeats. */
const REPEATS: Record<string, string> = {
  'Time to First Output Token (ms)': 'Time to First Token (ms)',
  'Output Token Count (tokens)': 'Output Sequence Length (tokens)',
};

test('report.html shows the console summary rows and values, less the rows that repeat another, named in a note', async () => {
  const report = await writeReport(dir);
  const html = readFileSync(report.path, 'utf8');
  const console = consoleRows(readFileSync(join(dir, 'profile_export_console.txt'), 'utf8'));
  const row = (label: string) => console.find((r) => r[0] === label)?.slice(1);
  for (const [repeat, of] of Object.entries(REPEATS)) assert.deepEqual(row(repeat), row(of), repeat);
  assert.deepEqual(
    htmlSummaryRows(html),
    console.filter((r) => !((r[0] ?? '') in REPEATS)),
  );
  const section = html.slice(html.indexOf('id="summary"'), html.indexOf('id="errors"'));
  for (const [repeat, of] of Object.entries(REPEATS))
    assert.ok(section.includes(`${repeat}: left out, the same as ${of} in every column`), repeat);
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

/** The lead lines of a report page, unescaped. */
function leadLines(html: string): string[] {
  const lead = html.slice(html.indexOf('<section id="lead">'), html.indexOf('<section id="summary">'));
  return [...lead.matchAll(/<div class="lead [a-z]+">([^<]*)<\/div>/g)].map((m) =>
    (m[1] ?? '')
      .replaceAll('&#39;', "'")
      .replaceAll('&quot;', '"')
      .replaceAll('&lt;', '<')
      .replaceAll('&gt;', '>')
      .replaceAll('&amp;', '&'),
  );
}

test('report.html leads with the console lines: load, tokenizer, client and server verdicts, connections, start-up, usage check', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const console = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8').split('\n');
  const prefixes = [
    'Load: ',
    'Tokenizer: ',
    'Client health: ',
    'Server verdict: ',
    'Connections: ',
    'Start-up: ',
    'Usage check: ',
  ];
  const expected = prefixes.map((p) => console.find((l) => l.startsWith(p)));
  assert.ok(
    expected.every((l) => l !== undefined),
    console.slice(0, 12).join('\n'),
  );
  assert.deepEqual(leadLines(html), expected);
  assert.ok(html.indexOf('id="lead"') < html.indexOf('id="summary"'), 'before the summary table');
});

test('a --simulator run names the simulator it measured in the report header, not localhost:8000', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  const url: string = summary.tokenload_config.url[0];
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const meta = html.slice(html.indexOf('<div class="meta">'), html.indexOf('</header>'));
  assert.ok(meta.includes(`<b>server</b> ${url}`), meta);
  assert.doesNotMatch(html, /localhost:8000/);
});

test('the time slices are drawn on the shared time axis, one flat step per slice at its values', async () => {
  const html = readFileSync((await writeReport(dir)).path, 'utf8');
  const slices = JSON.parse(
    readFileSync(join(dir, 'profile_export_aiperf_timeslices.json'), 'utf8'),
  ).timeslices;
  assert.ok(slices.length >= 3, `${slices.length} slices`);
  const specs = chartSpecs(html);
  const five = (v: number) => Number.parseFloat(v.toPrecision(5));
  const steps = (id: string, i: number) => {
    const spec = specs.find((c) => c.id === id);
    assert.ok(spec !== undefined && spec.group === 'time', id);
    const series = spec.option.series as { name: string; data: [number, number | string][] }[];
    // Two points per slice (its start and its end), both at the slice's value.
    const points = series[i]?.data.filter((p) => p[1] !== '-') ?? [];
    return points.filter((_, k) => k % 2 === 0).map((p) => p[1]);
  };
  assert.deepEqual(
    steps('slice-throughput-over-time', 0),
    slices.map((s: Record<string, { avg: number }>) => five(s.request_throughput?.avg ?? Number.NaN)),
  );
  assert.deepEqual(
    steps('slice-latency-over-time', 1),
    slices.map((s: Record<string, { p99: number }>) => five(s.time_to_first_token?.p99 ?? Number.NaN)),
  );
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

/**
 * A copy of the run whose summary also holds the sections other stages write (server verdict,
 * steady state, tails with failures), as given: the report must show them as they are.
 */
async function withJudgements(name: string, status: string, steadyRate: number): Promise<string> {
  const copy = join(mkdtempSync(join(tmpdir(), 'tokenload-report-judged-')), name);
  cpSync(dir, copy, { recursive: true });
  const file = join(copy, 'profile_export_aiperf.json');
  const summary = JSON.parse(readFileSync(file, 'utf8'));
  const t0 = (await loadRun(dir)).t0Ns;
  summary.server_verdict = {
    status,
    reason: 'requests in flight and TTFT grew through the run',
    queue_growth_per_s: 3.25,
    since_s: 1.5,
    onset_request_rate_per_s: 8,
    evidence: ['in flight rose from 2 to 14', 'TTFT p50 rose 12× from the first to the last slice'],
  };
  summary.steady_state = {
    start_ns: Number(t0 + 1_000_000_000n),
    end_ns: Number(t0 + 3_000_000_000n),
    method: 'cusum-in-flight+mser5',
    fraction_of_run: 0.5,
    requests: 12,
    fallback_reason: null,
    metrics: {
      request_throughput: { unit: 'requests/sec', avg: steadyRate },
      time_to_first_token: { unit: 'ms', avg: 40, p50: 41.5, p90: 50, p99: 77.25 },
    },
    littles_law: {
      mean_in_flight: 2,
      throughput_per_s: 4,
      mean_latency_s: 0.4,
      relative_gap: 0.2,
      warning: 'mean in flight is 20 % off throughput × mean latency',
    },
  };
  summary.tails_with_failures = {
    requests: 24,
    failed: 3,
    cancelled: 0,
    censored: 0,
    time_to_first_token: { unit: 'ms', p50: 12.5, p90: 80, p95: null, p99: null },
    request_latency: { unit: 'ms', p50: 300, p90: 900, p95: null, p99: null },
  };
  writeFileSync(file, JSON.stringify(summary));
  return copy;
}

/** The HTML of section `id` of a page. */
function sectionHtml(html: string, id: string): string {
  const start = html.indexOf(`<section id="${id}">`);
  assert.ok(start >= 0, `section ${id}`);
  return html.slice(start, html.indexOf('</section>', start));
}

/** The body rows of the table in section `id` of a page, as [label, ...cells]. */
function sectionRows(html: string, id: string): string[][] {
  const section = sectionHtml(html, id);
  return [...section.matchAll(/<tr>(<td.*?)<\/tr>/g)].map((m) =>
    [...(m[1] ?? '').matchAll(/<td[^>]*>([^<]*)<\/td>/g)].map((c) => c[1] ?? ''),
  );
}

test('tokenload report shows the server verdict beside the client one, steady state vs whole run with its band, and tails with failures', async () => {
  const judged = await withJudgements('judged', 'overloaded', 4);
  const r = await runCliProcess(['report', judged]);
  assert.equal(r.code, 0, r.stderr);
  const html = readFileSync(join(judged, 'report.html'), 'utf8');
  const lead = leadLines(html);
  const health = lead.findIndex((l) => l.startsWith('Client health: '));
  assert.equal(
    lead[health + 1],
    'Server verdict: overloaded: requests in flight and TTFT grew through the run',
  );
  assert.match(
    sectionHtml(html, 'lead'),
    /<li>queue growth 3\.25 requests\/s, since 1\.5 s, onset at 8 requests\/s offered<\/li><li>in flight rose from 2 to 14<\/li>/,
  );
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  const two = (v: number) =>
    v.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  const steady = sectionRows(html, 'steady-state');
  assert.deepEqual(
    steady.find((row) => row[0]?.startsWith('Request throughput')),
    ['Request throughput (requests/sec)', two(summary.request_throughput.avg), '4.00'],
  );
  assert.deepEqual(
    steady.find((row) => row[0] === 'TTFT p99 (ms)'),
    ['TTFT p99 (ms)', two(summary.time_to_first_token.p99), '77.25'],
  );
  // A figure the window lacks reads N/A beside the whole run's.
  assert.equal(steady.find((row) => row[0] === 'Request latency p50 (ms)')?.[2], 'N/A');
  assert.match(
    sectionHtml(html, 'steady-state'),
    /Window: 1\.0 s to 3\.0 s after the first request \(50 % of the run, 12 requests, method: cusum-in-flight\+mser5\)/,
  );
  assert.match(sectionHtml(html, 'steady-state'), /mean in flight is 20 % off throughput × mean latency/);
  // The window is shaded on every chart over time, and on no other.
  for (const spec of chartSpecs(html)) {
    const first = (spec.option.series as { markArea?: { data: { xAxis: number }[][] } }[])[0];
    const band = first?.markArea?.data[0]?.map((p) => p.xAxis);
    assert.deepEqual(band, spec.group === 'time' ? [1, 3] : undefined, spec.id);
  }
  assert.deepEqual(sectionRows(html, 'tails').slice(1, 2), [
    ['Time to First Token (ms), failures counted', '12.50', '80.00', 'failed', 'failed'],
  ]);
  assert.match(
    sectionHtml(html, 'tails'),
    /24 requests: 3 failed, 0 cancelled, 0 still in flight at the cut-off/,
  );
});

test('tokenload compare A B: steady-state figures, the client and server verdicts and the windows of each run', async () => {
  const a = await withJudgements('base', 'ok', 5);
  const b = await withJudgements('overloaded', 'overloaded', 4);
  const r = await runCliProcess(['compare', a, b, '--output', join(b, 'compare.html')]);
  assert.equal(r.code, 0, r.stderr);
  const row = (label: string) => r.stdout.split('\n').find((l) => l.includes(label)) ?? '';
  assert.match(row('Steady state: request throughput'), /│ +5\.00 │ +4\.00 │ +-1\.00 │ +0\.80x │$/);
  assert.match(row('Steady state: TTFT p99'), /│ +77\.25 │ +77\.25 │ +0\.00 │ +1\.00x │$/);
  assert.match(row('Server verdict'), /│ +ok │ +overloaded │ +changed │ +│$/);
  // Both copies come from one run: one client-health status (ok unless this machine was busy).
  assert.match(row('Client health'), /│ +([a-z]+) │ +\1 │ +same │ +│$/);
  assert.match(
    row('Steady-state window'),
    /│ +1\.0–3\.0 s \(50 % of the run\) │ +1\.0–3\.0 s \(50 % of the run\) │ +same │/,
  );
  const html = readFileSync(join(b, 'compare.html'), 'utf8');
  assert.deepEqual(
    sectionRows(html, 'compare').find((c) => c[0] === 'Server verdict'),
    ['Server verdict', 'ok', 'overloaded', 'changed', ''],
  );
});
