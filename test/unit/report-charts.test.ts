/**
 * Chart builders: what each chart draws, which charts a run gets, and deterministic downsampling
 * that the subtitle admits to.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { binLayout, inFlightBins, outputThroughputBins } from '../../src/report/bins.js';
import { TIME_GROUP } from '../../src/report/chart-base.js';
import {
  buildRunCharts,
  cdfChart,
  errorTimelineChart,
  interChunkLatencyChart,
  islVsTtftChart,
  LATENCY_METRICS,
  overTimeChart,
  perTurnChart,
  perTurnTtftChart,
} from '../../src/report/charts.js';
import { MAX_POINTS_PER_CHART, sampleIndices } from '../../src/report/downsample.js';
import { parseRunSummary } from '../../src/report/summary-file.js';
import type { RequestPoint, RunData } from '../../src/report/types.js';
import { ValueSample } from '../../src/report/value-sample.js';

function req(startS: number, endS: number, over: Partial<RequestPoint> = {}): RequestPoint {
  return {
    sessionNum: 0,
    conversationId: 'c',
    turnIndex: 0,
    requestType: null,
    scheduledS: startS,
    startS,
    ackS: null,
    endS,
    cancelled: false,
    error: null,
    ttftMs: 100,
    itlMs: 5,
    latencyMs: (endS - startS) * 1000,
    isl: 1000,
    osl: 100,
    scheduleLagMs: 1,
    ...over,
  };
}

function run(requests: RequestPoint[], iclMs: number[] = []): RunData {
  return {
    dir: '/x',
    requests,
    t0Ns: 0n,
    summary: null,
    interChunkLatencyMs: { values: iclMs, total: iclMs.length },
  };
}

/** The marked values of a CDF's series `i`, by label. */
function marks(option: unknown, i = 0): Record<string, number> {
  const s = (option as { series: { markLine: { data: { name: string; xAxis: number }[] } }[] }).series[i]!;
  return Object.fromEntries(s.markLine.data.map((d) => [d.name, d.xAxis]));
}

function subtext(option: unknown): string {
  return ((option as { title: { subtext: string } }).title.subtext ?? '') as string;
}

function seriesData(option: unknown, i = 0): number[][] {
  return (option as { series: { data: number[][] }[] }).series[i]!.data;
}

const TTFT = LATENCY_METRICS[0]!;

test('output tokens are spread over first token → end, in tokens per second per 1 s bin', () => {
  // 100 tokens generated from 0.5 s (start 0 + TTFT 500 ms) to 2.5 s: 25 / 50 / 25 tokens in bins 0, 1, 2.
  const layout = binLayout(2.5);
  assert.deepEqual(layout, { widthS: 1, count: 3 });
  const bins = outputThroughputBins([req(0, 2.5, { ttftMs: 500, osl: 100 })], layout);
  assert.deepEqual(bins, [25, 50, 25]);
  // Failed requests produce no output tokens.
  assert.deepEqual(
    outputThroughputBins([req(0, 2.5, { error: { code: 500, type: 'E', message: '', kind: '' } })], layout),
    [0, 0, 0],
  );
});

test('requests in flight are time-weighted per bin', () => {
  const layout = binLayout(2);
  // One request for the whole 2 s, another for the second half of bin 0.
  assert.deepEqual(inFlightBins([req(0, 2), req(0.5, 1)], layout), [1.5, 1]);
});

test('long runs get wider bins so a chart never exceeds the bin limit', () => {
  const layout = binLayout(100_000);
  assert.ok(layout.count <= 20_000);
  assert.equal(layout.widthS, 5);
});

test('TTFT over time: one point per request at its start; no chart without TTFT', () => {
  const chart = overTimeChart([req(2, 3, { ttftMs: 40 }), req(1, 3, { ttftMs: 30 })], TTFT);
  assert.ok(chart);
  assert.equal(chart.id, 'ttft-over-time');
  assert.equal(chart.points, 2);
  assert.deepEqual(seriesData(chart.option), [
    [1, 30],
    [2, 40],
  ]);
  assert.equal(subtext(chart.option), '2 requests');
  assert.equal(overTimeChart([req(0, 1, { ttftMs: undefined })], TTFT), null);
});

test('huge series are downsampled deterministically to the limit, and the subtitle says so', () => {
  const n = 50_000;
  const requests = Array.from({ length: n }, (_, i) => req(i / 100, i / 100 + 1, { ttftMs: i }));
  const a = overTimeChart(requests, TTFT)!;
  const b = overTimeChart(requests, TTFT)!;
  assert.equal(a.points, MAX_POINTS_PER_CHART);
  assert.deepEqual(seriesData(a.option), seriesData(b.option));
  assert.match(subtext(a.option), /downsampled: 20,000 of 50,000 points/);
  // The last point (latest request) is kept.
  assert.deepEqual(seriesData(a.option).at(-1), [499.99, 49_999]);
  assert.deepEqual(sampleIndices(3, 5), [0, 1, 2]);
});

test('CDF ends at 100 % at the maximum; overlaid CDFs get one line and a legend per run', () => {
  const single = cdfChart(TTFT, [{ name: 'a', values: [3, 1, 2, 4] }])!;
  assert.deepEqual(seriesData(single.option), [
    [1, 25],
    [2, 50],
    [3, 75],
    [4, 100],
  ]);
  const multi = cdfChart(
    TTFT,
    [
      { name: 'a', values: [1, 2] },
      { name: 'b', values: [3] },
      { name: 'empty', values: [] },
    ],
    { idPrefix: 'compare-' },
  )!;
  assert.equal(multi.id, 'compare-ttft-cdf');
  const opt = multi.option as { series: { name: string }[]; legend?: unknown };
  assert.deepEqual(
    opt.series.map((s) => s.name),
    ['a', 'b'],
  );
  assert.ok(opt.legend);
  assert.equal(cdfChart(TTFT, [{ name: 'a', values: [] }]), null);
});

test('a CDF marks p50, p90 and p99 of each line (numpy-linear, as the summary); given marks win', () => {
  const values = Array.from({ length: 101 }, (_, i) => 100 - i);
  const chart = cdfChart(TTFT, [{ name: 'a', values }])!;
  assert.deepEqual(marks(chart.option), { p50: 50, p90: 90, p99: 99 });
  assert.match(subtext(chart.option), /marks: p50, p90, p99/);
  const given = cdfChart(TTFT, [{ name: 'a', values, marks: { p50: 1, p90: 2, p99: 3 } }])!;
  assert.deepEqual(marks(given.option), { p50: 1, p90: 2, p99: 3 });
  const two = cdfChart(TTFT, [
    { name: 'a', values: [1, 2, 3] },
    { name: 'b', values: [10, 20, 30] },
  ])!;
  assert.deepEqual(marks(two.option, 1), { p50: 20, p90: 28, p99: 29.8 });
});

test('inter-chunk latency: a CDF of every gap right after the ITL CDF; none without gaps', () => {
  const ids = buildRunCharts(run([req(0, 1), req(0.5, 2)], [1, 2, 3, 40])).map((c) => c.id);
  assert.deepEqual(ids.slice(3, 7), ['ttft-cdf', 'itl-cdf', 'icl-cdf', 'latency-cdf']);
  const icl = interChunkLatencyChart({ values: [1, 2, 3, 40], total: 4 }, undefined)!;
  assert.match(subtext(icl.option), /^4 gaps between chunks · marks: p50, p90, p99$/);
  assert.equal(interChunkLatencyChart({ values: [], total: 0 }, undefined), null);
  // A sample that dropped gaps is marked with the summary's percentiles over all of them.
  const summary = { unit: 'ms', avg: 5, p50: 2.5, p90: 30, p99: 39 };
  const sampled = interChunkLatencyChart({ values: [1, 2, 3, 40], total: 8 }, summary)!;
  assert.deepEqual(marks(sampled.option), { p50: 2.5, p90: 30, p99: 39 });
  assert.match(subtext(sampled.option), /a sample of 4 of 8 gaps; marks: the summary’s, over all gaps/);
});

test('inter-chunk latency: one stall past 10× the p99 puts the x axis on a log scale, and the subtitle says so', () => {
  // 999 gaps of 2 ms and one 610 ms stall (p99 2 ms): on a linear axis every other gap sits at 0.3 % of its width.
  const gaps = [...Array.from({ length: 999 }, () => 2), 610];
  const stalled = interChunkLatencyChart({ values: gaps, total: gaps.length }, undefined)!;
  const x = (c: typeof stalled) => (c.option as { xAxis: { type: string; name: string } }).xAxis;
  assert.equal(x(stalled).type, 'log');
  assert.match(x(stalled).name, /log scale/);
  assert.match(subtext(stalled.option), /log x axis: the largest gap \(610 ms\) is 305× the p99/);
  // A gap of 0 ms cannot sit on a log axis: the line starts at the first positive gap, whose share
  // still counts the 0 ms gap below it (2 of 1,000 gaps, 0.2 %).
  const withZero = interChunkLatencyChart({ values: [0, ...gaps.slice(1)], total: 1000 }, undefined)!;
  assert.deepEqual(seriesData(withZero.option)[0], [2, 0.2]);
  // Without an outlier the axis stays linear and the subtitle says nothing of a log scale.
  const even = interChunkLatencyChart({ values: [1, 2, 3, 4, 5, 6, 7, 8, 9, 40], total: 10 }, undefined)!;
  assert.equal(x(even).type, 'value');
  assert.doesNotMatch(subtext(even.option), /log/);
});

test('every time chart shares one x axis (0 to the last response, whole bins) and one zoom group', () => {
  const e = { error: { code: 500, type: 'T', message: '', kind: '' } };
  const charts = buildRunCharts(run([req(0, 1), req(0.5, 2.4), req(1, 1.2, e)]));
  const timed = charts.filter((c) => c.group === TIME_GROUP);
  assert.deepEqual(
    timed.map((c) => c.id),
    [
      'ttft-over-time',
      'itl-over-time',
      'latency-over-time',
      'output-throughput-over-time',
      'in-flight-over-time',
      'schedule-lag-over-time',
      'errors-over-time',
    ],
  );
  for (const c of timed) {
    const x = (c.option as { xAxis: { min: number; max: number } }).xAxis;
    assert.deepEqual([x.min, x.max], [0, 3], c.id);
    assert.ok((c.option as { dataZoom?: unknown[] }).dataZoom?.length, `${c.id} zooms`);
  }
  assert.ok(charts.filter((c) => c.id.endsWith('-cdf')).every((c) => c.group === undefined));
});

test('a value sample keeps every k-th value in fixed memory, the same every time', () => {
  const a = new ValueSample(1000);
  const b = new ValueSample(1000);
  for (let i = 0; i < 1_000_000; i++) {
    a.add(i);
    b.add(i);
  }
  a.add(Number.NaN);
  const r = a.result();
  assert.equal(r.total, 1_000_000);
  assert.ok(r.values.length >= 1000 && r.values.length < 2000, `${r.values.length} kept`);
  assert.deepEqual(r.values, b.result().values);
  const stride = (r.values[1] as number) - (r.values[0] as number);
  assert.ok(
    r.values.every((v, i) => v === i * stride),
    'evenly spaced from the first',
  );
});

test('ISL vs TTFT is coloured by cached tokens only when the server reported them', () => {
  const cached = islVsTtftChart([req(0, 1, { cachedTokens: 512 }), req(1, 2, { cachedTokens: 0 })])!;
  const vm = (cached.option as { visualMap?: { dimension: number; max: number } }).visualMap;
  assert.equal(vm?.dimension, 2);
  assert.equal(vm?.max, 512);
  assert.deepEqual(seriesData(cached.option)[0], [1000, 100, 512]);
  // A request without cached tokens is unknown, not 0: outside the scale, drawn grey.
  const partly = islVsTtftChart([req(0, 1, { cachedTokens: 512 }), req(1, 2)])!;
  assert.equal(seriesData(partly.option)[1]?.[2], -1);
  const outOfRange = (partly.option as { visualMap?: { min: number; outOfRange?: { color: string } } })
    .visualMap;
  assert.equal(outOfRange?.min, 0);
  assert.equal(outOfRange?.outOfRange?.color, '#b0b0b0');
  const plain = islVsTtftChart([req(0, 1)])!;
  assert.equal((plain.option as { visualMap?: unknown }).visualMap, undefined);
});

test('TTFT by turn appears only for multi-turn sessions, with a box per turn', () => {
  assert.equal(perTurnTtftChart([req(0, 1), req(1, 2)]), null);
  const chart = perTurnTtftChart([
    req(0, 1, { ttftMs: 10 }),
    req(1, 2, { ttftMs: 30 }),
    req(2, 3, { turnIndex: 1, ttftMs: 5 }),
  ])!;
  const boxes = seriesData(chart.option, 0);
  assert.deepEqual(boxes[0], [10, 15, 20, 25, 30]);
  assert.deepEqual(boxes[1], [5, 5, 5, 5, 5]);
  assert.equal(chart.points, 5, 'three dots and two boxes');
  // Turn index 0 is the first turn: labelled 1, as traces count turns.
  const x = (chart.option as { xAxis: { data: string[]; name: string } }).xAxis;
  assert.deepEqual(x.data, ['1 (n=2)', '2 (n=1)']);
  assert.match(x.name, /the first is 1/);
});

/** A `per_turn` entry as the summary JSON has it: TTFT p50/p90 (ms) and the cache figures. */
function turnEntry(label: string, p50: number, p90: number, hit: number | null) {
  const ttft = { unit: 'ms', avg: p50, p50, p90, p99: p90, max: p90, count: 2 };
  const cache = {
    requests_reported: hit === null ? 0 : 2,
    requests_unknown: hit === null ? 2 : 0,
    hit_ratio: hit,
  };
  return {
    turn_index: label === '10+' ? 10 : Number(label),
    label,
    requests: 2,
    errors: 0,
    time_to_first_token: ttft,
    cache,
  };
}

test("per-turn chart from the summary's per_turn: TTFT p50/p90 by bucket, cache hit % bars, no bar where none was reported", () => {
  const summaryWith = (turns: unknown[]) => parseRunSummary({ per_turn: { bucket_cap: 10, turns } }).perTurn;
  assert.equal(perTurnChart(parseRunSummary({}).perTurn), null);
  assert.equal(
    perTurnChart(summaryWith([turnEntry('0', 40, 60, 0.1)])),
    null,
    'one bucket: nothing to compare',
  );
  const chart = perTurnChart(summaryWith([turnEntry('0', 40, 60, 0.1), turnEntry('10+', 12, 15, null)]))!;
  assert.equal(chart.id, 'per-turn');
  const series = (chart.option as { series: { name: string; data: unknown[] }[] }).series;
  assert.deepEqual(
    series.map((x) => [x.name, x.data]),
    [
      ['TTFT p50', [40, 12]],
      ['TTFT p90', [60, 15]],
      ['cached / prompt tokens (%)', [10, '-']],
    ],
  );
  const x = (chart.option as { xAxis: { data: string[] } }).xAxis;
  assert.deepEqual(x.data, ['0 (n=2)', '10+ (n=2)']);
  const none = perTurnChart(summaryWith([turnEntry('0', 40, 60, null), turnEntry('1', 12, 15, null)]))!;
  assert.equal((none.option as { series: unknown[] }).series.length, 2, 'no cache series without reports');
  assert.match(subtext(none.option), /no cached_tokens reported/);
});

test('errors over time: failed requests per bin, one stacked series per error type, aligned by bin', () => {
  const e = (type: string): Partial<RequestPoint> => ({
    error: { code: 500, type, message: 'x', kind: 'http' },
  });
  const chart = errorTimelineChart([
    req(0, 0.2, e('Timeout')),
    req(0, 0.4, e('Timeout')),
    req(0, 1.5, e('HTTP 500')),
    req(0, 2),
  ])!;
  const opt = chart.option as { series: { name: string; stack: string; data: number[][] }[] };
  assert.deepEqual(
    opt.series.map((s) => [s.name, s.data]),
    [
      [
        'HTTP 500',
        [
          [0.5, 0],
          [1.5, 1],
        ],
      ],
      [
        'Timeout',
        [
          [0.5, 2],
          [1.5, 0],
        ],
      ],
    ],
  );
  assert.match(subtext(chart.option), /3 failed requests/);
  assert.equal(errorTimelineChart([req(0, 1)]), null);
});

test('a clean streaming single-turn run gets the ten charts that apply to it, in order', () => {
  const ids = buildRunCharts(run([req(0, 1), req(0.5, 2)])).map((c) => c.id);
  assert.deepEqual(ids, [
    'ttft-over-time',
    'itl-over-time',
    'latency-over-time',
    'ttft-cdf',
    'itl-cdf',
    'latency-cdf',
    'output-throughput-over-time',
    'in-flight-over-time',
    'schedule-lag-over-time',
    'isl-vs-ttft',
  ]);
  const all = buildRunCharts(
    run([
      req(0, 1),
      req(0.5, 2, { turnIndex: 1 }),
      req(1, 2, { error: { code: 1, type: 'T', message: '', kind: '' } }),
    ]),
  );
  assert.deepEqual(
    all.slice(-2).map((c) => c.id),
    ['ttft-by-turn', 'errors-over-time'],
  );
  for (const c of all) {
    assert.ok(c.points > 0, c.id);
    assert.doesNotThrow(() => JSON.parse(JSON.stringify(c.option)));
  }
});

/**
 * Each mark label's horizontal extent in the PNG's SVG (`tokenload plot`'s renderer): a label runs
 * along its vertical line (rotated a quarter turn), so its glyphs span one font size across, centred
 * on `e + y` of its `matrix(0,-1,1,0,e,f)` transform.
 */
function labelBoxes(svg: string): Map<string, [number, number]> {
  const boxes = new Map<string, [number, number]>();
  const texts = svg.matchAll(
    /<text[^>]*y="(-?[\d.]+)"[^>]*matrix\(0,-1,1,0,([\d.]+),[\d.]+\)[^>]*>(p\d\d) /g,
  );
  for (const [, y, e, name] of texts) {
    const centre = Number(e) + Number(y);
    boxes.set(name as string, [centre - 5.5, centre + 5.5]);
  }
  return boxes;
}

test('CDF mark labels are drawn inside the plot area: never over the y axis, nor past the last value', async () => {
  const { init } = await import('echarts');
  const skews = {
    // Most gaps near 0, a long tail (the inter-chunk latency of a streamed run): p50 and p90 hug the y axis.
    left: [
      ...Array.from({ length: 980 }, (_, i) => 0.2 + (i % 50) / 100),
      ...Array.from({ length: 20 }, (_, i) => 5 + i * 2),
    ],
    // Most values near the largest: every mark hugs the right end.
    right: [
      ...Array.from({ length: 20 }, (_, i) => i),
      ...Array.from({ length: 980 }, (_, i) => 95 + (i % 50) / 10),
    ],
  };
  for (const [skew, values] of Object.entries(skews)) {
    const chart = interChunkLatencyChart({ values, total: values.length }, undefined);
    assert.ok(chart !== null);
    const instance = init(null, null, { renderer: 'svg', ssr: true, width: 1000, height: 500 });
    try {
      instance.setOption(chart.option);
      const xOf = (v: number): number => instance.convertToPixel({ xAxisIndex: 0 }, v) as number;
      const boxes = labelBoxes(instance.renderToSVGString());
      assert.deepEqual([...boxes.keys()].sort(), ['p50', 'p90', 'p99'], skew);
      for (const [name, [from, to]] of boxes) {
        assert.ok(from >= xOf(0), `${skew}: ${name} label (${from}–${to}) crosses the y axis at ${xOf(0)}`);
        assert.ok(
          to <= xOf(Math.max(...values)),
          `${skew}: ${name} label (${from}–${to}) past the last value`,
        );
      }
    } finally {
      instance.dispose();
    }
  }
});
