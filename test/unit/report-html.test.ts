/**
 * The HTML report, PNG plots and comparison from a hand-made artifact directory: one self-contained
 * file, the console's summary rows, errors and warnings, chart containers with point counts; PNGs
 * on disk; a comparison table with deltas and ratios.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildRunCharts } from '../../src/report/charts.js';
import { compareRuns, renderCompareHtml } from '../../src/report/compare.js';
import { renderReportHtml, writeReport } from '../../src/report/html.js';
import { loadRun } from '../../src/report/load-run.js';
import { renderChartSvg, writePlots } from '../../src/report/png.js';

const T0 = 1_795_978_732_000_000_000n;

function record(i: number, ttftMs: number, error: string | null): string {
  const start = T0 + BigInt(i) * 250_000_000n;
  const end = start + 400_000_000n;
  const metrics = error
    ? '{}'
    : `{"time_to_first_token":{"value":${ttftMs},"unit":"ms"},"inter_token_latency":{"value":3,"unit":"ms"},"request_latency":{"value":400,"unit":"ms"},"input_sequence_length":{"value":${100 + i},"unit":"tokens"},"output_sequence_length":{"value":50,"unit":"tokens"},"schedule_lag":{"value":0.2,"unit":"ms"}}`;
  return `{"metadata":{"session_num":${i},"conversation_id":"${i}","turn_index":0,"x_request_id":"x","x_correlation_id":"${i}","benchmark_phase":"profiling","request_type":null,"request_scheduled_ns":${start},"request_start_ns":${start},"request_ack_ns":null,"request_end_ns":${end},"was_cancelled":false},"metrics":${metrics},"error":${error ?? 'null'}}`;
}

const stats = (avg: number) => ({
  unit: 'ms',
  avg,
  min: avg,
  max: avg,
  p1: avg,
  p5: avg,
  p10: avg,
  p25: avg,
  p50: avg,
  p75: avg,
  p90: avg,
  p95: avg,
  p99: avg,
  std: 0,
  count: 10,
});

function writeRun(ttftMs: number, throughput: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-report-html-'));
  const err =
    '{"code":500,"type":"InternalServerError","message":"boom </script><script>alert(1)</script>","kind":"http"}';
  const lines = Array.from({ length: 12 }, (_, i) => record(i, ttftMs, i === 11 ? err : null));
  writeFileSync(join(dir, 'profile_export.jsonl'), `${lines.join('\n')}\n`);
  const summary = {
    schema_version: '1.0',
    tokenload_version: '0.1.0',
    start_time: '2026-11-29T18:58:52.255Z',
    end_time: '2026-11-29T18:58:55.255Z',
    was_cancelled: false,
    time_to_first_token: stats(ttftMs),
    time_to_second_token: stats(1),
    request_latency: stats(400),
    inter_token_latency: stats(3),
    error_isl: stats(1),
    output_token_throughput: { unit: 'tokens/sec', avg: throughput },
    request_count: { unit: 'requests', avg: 11 },
    error_request_count: { unit: 'requests', avg: 1 },
    input_config: {
      models: ['Qwen/Qwen3-0.6B'],
      endpointType: 'chat',
      apiKey: '<redacted>',
      commandLine: 'tokenload profile --x',
    },
    error_summary: [{ code: 500, type: 'InternalServerError', message: 'boom', count: 1 }],
    warnings: ['3 requests returned fewer tokens than requested'],
  };
  writeFileSync(join(dir, 'profile_export_aiperf.json'), JSON.stringify(summary));
  return dir;
}

test('report.html is one self-contained page: echarts inlined, no network reference', async () => {
  const html = renderReportHtml(await loadRun(writeRun(20, 1000)));
  assert.match(html, /^<!doctype html>/);
  assert.ok(html.length > 1_000_000, 'echarts is inlined');
  assert.doesNotMatch(html, /<script[^>]+src=/i);
  assert.doesNotMatch(html, /<link[^>]+href=/i);
  assert.doesNotMatch(html, /(src|href)=["']?https?:/i);
  assert.match(html, /window\.__TOKENLOAD_REPORT_READY = \{ charts: specs\.length, points: points \}/);
  // Text from the run cannot close a script or inject markup.
  assert.equal(html.match(/<\/script>/g)?.length, 3);
  assert.doesNotMatch(html, /alert\(1\)<\/script>/);
});

test('report.html holds the console summary rows, the errors, warnings and the run configuration', async () => {
  const html = renderReportHtml(await loadRun(writeRun(20, 1000)));
  const summary = html.slice(html.indexOf('id="summary"'), html.indexOf('id="errors"'));
  const labels = [...summary.matchAll(/<tr><td class="text">([^<]+)<\/td>/g)].map((m) => m[1]);
  // Console order (display order); error-only metrics such as error_isl are hidden, as in the console.
  assert.deepEqual(labels, [
    'Time to First Token (ms)',
    'Time to Second Token (ms)',
    'Request Latency (ms)',
    'Inter Token Latency (ms)',
    'Output Token Throughput (tokens/sec)',
    'Request Count',
    'Error Request Count',
  ]);
  assert.match(summary, /<td>1,000\.00<\/td><td>N\/A<\/td>/);
  assert.match(html, /InternalServerError/);
  // The Errors headers sit over their columns: the three text columns' headers are left-aligned as their cells.
  assert.match(
    html,
    /<th class="text">Code<\/th><th class="text">Type<\/th><th class="text">Message<\/th><th>Count<\/th>/,
  );
  assert.match(html, /th\.text \{ text-align: left; \}|th\.text, [^{]*\{ text-align: left/);
  assert.match(html, /3 requests returned fewer tokens than requested/);
  assert.match(html, /&quot;apiKey&quot;: &quot;&lt;redacted&gt;&quot;/);
  assert.match(html, /tokenload profile --x/);
});

test('every chart container declares its data points, matching the chart specs', async () => {
  const run = await loadRun(writeRun(20, 1000));
  const html = renderReportHtml(run);
  const declared = [...html.matchAll(/data-chart-id="([^"]+)" data-points="(\d+)"/g)].map((m) => [
    m[1],
    Number(m[2]),
  ]);
  const specs = buildRunCharts(run).map((c) => [c.id, c.points]);
  assert.deepEqual(declared, specs);
  assert.ok(declared.some(([id]) => id === 'errors-over-time'));
  assert.equal(specs.find(([id]) => id === 'ttft-over-time')?.[1], 11);
});

test('writeReport writes <dir>/report.html and reports its size and build time', async () => {
  const dir = writeRun(20, 1000);
  const r = await writeReport(dir);
  assert.equal(r.path, join(dir, 'report.html'));
  assert.equal(r.bytes, readFileSync(r.path).length);
  assert.ok(r.ms > 0);
});

test('plots: each chart becomes an SVG via echarts SSR and a PNG in <dir>/plots/', async () => {
  const dir = writeRun(20, 1000);
  const run = await loadRun(dir);
  const svg = await renderChartSvg(buildRunCharts(run)[0]!, { widthPx: 400, heightPx: 300, scale: 1 });
  assert.match(svg, /^<svg[^>]+width="400" height="300"/);
  assert.match(svg, /Time to first token over time/);
  const result = await writePlots(dir, { widthPx: 400, heightPx: 250, scale: 1 });
  assert.equal(result.files.length, buildRunCharts(run).length);
  for (const f of result.files) {
    assert.equal(f.path, join(dir, 'plots', `${f.id}.png`));
    const png = readFileSync(f.path);
    assert.deepEqual([...png.subarray(1, 4)], [0x50, 0x4e, 0x47], `${f.id} is a PNG`);
    assert.equal(png.readUInt32BE(16), 400, `${f.id} width`);
  }
});

test('compare: key metrics side by side with deltas and ratios against the first run', async () => {
  const a = writeRun(20, 1000);
  const b = writeRun(30, 500);
  const out = join(mkdtempSync(join(tmpdir(), 'tokenload-compare-')), 'compare.html');
  const r = await compareRuns([a, b], out);
  const row = (label: string): string => r.table.split('\n').find((l) => l.includes(label)) ?? '';
  assert.match(r.table, /A = tokenload-report-html-\w+/);
  assert.match(row('TTFT avg (ms)'), /20\.00 .* 30\.00 .* \+10\.00 .* 1\.50x/);
  assert.match(row('Output token throughput'), /1,000\.00 .* 500\.00 .* -500\.00 .* 0\.50x/);
  assert.match(row('Error count'), /1\.00 .* 1\.00 .* 0\.00 .* 1\.00x/);
  const html = readFileSync(out, 'utf8');
  assert.equal(r.htmlBytes, Buffer.byteLength(html));
  assert.match(html, /data-chart-id="compare-ttft-cdf"/);
  assert.match(html, /data-chart-id="compare-latency-cdf"/);
  await assert.rejects(compareRuns([a], out), /at least two/);
});

test('compare.html overlays one CDF line per run', async () => {
  const runs = [await loadRun(writeRun(20, 1)), await loadRun(writeRun(30, 1))];
  const html = renderCompareHtml(runs, ['base', 'new']);
  const json = html.slice(
    html.indexOf('id="tokenload-charts">') + 22,
    html.lastIndexOf('</script>\n<script>'),
  );
  const specs = JSON.parse(json) as { id: string; option: { series: { name: string }[] } }[];
  assert.deepEqual(
    specs.map((s) => [s.id, s.option.series.map((x) => x.name)]),
    [
      ['compare-ttft-cdf', ['base', 'new']],
      ['compare-itl-cdf', ['base', 'new']],
      ['compare-latency-cdf', ['base', 'new']],
    ],
  );
});
