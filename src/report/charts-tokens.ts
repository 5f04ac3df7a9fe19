/**
 * Token-shape charts: ISL against TTFT (coloured by cached prompt tokens when the server reported
 * them), reported against ideal cached tokens, and TTFT by turn index for multi-turn sessions.
 */
import type { EChartsOption } from 'echarts';
import { percentileSorted } from '../metrics/stats.js';
import { baseOption, type ChartSpec, compact, countSubtitle, subtitle, valueAxis } from './chart-base.js';
import { downsample } from './downsample.js';
import type { RequestPoint } from './types.js';

/** The colour value of a request whose server reported no cached tokens (outside the scale: grey). */
const NOT_REPORTED = -1;

function cachedRange(data: readonly number[][]): number {
  let max = 0;
  for (const d of data) max = Math.max(max, d[2] ?? 0);
  return max;
}

/**
 * One point per request `[ISL, TTFT ms(, cached tokens)]`; a colour scale shows `usage_cached_tokens`
 * when any request carries it, grey for a request without it (unknown, not 0). Null when no request
 * has both ISL and TTFT.
 */
export function islVsTtftChart(requests: readonly RequestPoint[]): ChartSpec | null {
  const withCache = requests.some((r) => r.cachedTokens !== undefined);
  const all: number[][] = [];
  for (const r of requests) {
    if (r.isl === undefined || r.ttftMs === undefined) continue;
    // A request that reported no cached tokens is unknown, not 0: below the scale, drawn grey.
    all.push(
      withCache ? [r.isl, compact(r.ttftMs), r.cachedTokens ?? NOT_REPORTED] : [r.isl, compact(r.ttftMs)],
    );
  }
  if (all.length === 0) return null;
  const data = downsample(all) as number[][];
  const title = withCache ? 'ISL vs TTFT, coloured by cached tokens' : 'ISL vs TTFT';
  const option: EChartsOption = {
    ...baseOption(title, countSubtitle(data.length, all.length)),
    xAxis: valueAxis('input sequence length (tokens)'),
    yAxis: valueAxis('time to first token (ms)', { nameGap: 62 }),
    // Large mode draws every point in one colour, which would hide the cached-token scale.
    series: [
      { type: 'scatter', name: 'request', symbolSize: 5, data, large: !withCache && all.length > 5000 },
    ],
  };
  if (withCache) {
    const maxCached = Math.max(1, cachedRange(data));
    option.grid = { left: 70, right: 130, top: 70, bottom: 55, containLabel: true };
    option.visualMap = {
      type: 'continuous',
      dimension: 2,
      min: 0,
      max: maxCached,
      right: 10,
      top: 'middle',
      calculable: false,
      text: [`${maxCached.toLocaleString('en-US')} cached`, '0 cached'],
      inRange: { color: ['#313695', '#4575b4', '#74add1', '#fdae61', '#f46d43', '#a50026'] },
      outOfRange: { color: '#b0b0b0' },
    };
  }
  return { id: 'isl-vs-ttft', title, option, points: data.length };
}

/**
 * One point per request `[ideal cached tokens, reported cached tokens]` with the line reported =
 * ideal: points above it are hits the run's own earlier requests cannot explain (a warm cache). Null
 * when no request has both.
 */
export function cachedTokensChart(requests: readonly RequestPoint[]): ChartSpec | null {
  const all: number[][] = [];
  let max = 1;
  for (const r of requests) {
    if (r.idealCachedTokens === undefined || r.cachedTokens === undefined) continue;
    all.push([r.idealCachedTokens, r.cachedTokens]);
    max = Math.max(max, r.idealCachedTokens, r.cachedTokens);
  }
  if (all.length === 0) return null;
  const data = downsample(all) as number[][];
  const title = 'Cached prompt tokens: reported vs ideal';
  const option: EChartsOption = {
    ...baseOption(title, subtitle(countSubtitle(data.length, all.length), 'line: reported = ideal')),
    xAxis: valueAxis('ideal cached tokens (blocks sent earlier in this run)', { min: 0, scale: false }),
    yAxis: valueAxis('reported cached tokens (usage)', { min: 0, scale: false, nameGap: 62 }),
    series: [
      { type: 'scatter', name: 'request', symbolSize: 5, data },
      {
        type: 'line',
        name: 'reported = ideal',
        data: [
          [0, 0],
          [max, max],
        ],
        symbol: 'none',
        lineStyle: { type: 'dashed', color: '#888' },
      },
    ],
  };
  return { id: 'cached-tokens', title, option, points: data.length };
}

/** TTFT values grouped by turn index (index = position in the array). */
function ttftByTurn(requests: readonly RequestPoint[]): number[][] {
  const groups: number[][] = [];
  for (const r of requests) {
    if (r.ttftMs === undefined) continue;
    while (groups.length <= r.turnIndex) groups.push([]);
    groups[r.turnIndex]!.push(r.ttftMs);
  }
  return groups;
}

function boxOf(values: readonly number[]): number[] {
  if (values.length === 0) return [];
  const s = Float64Array.from(values).sort();
  return [0, 25, 50, 75, 100].map((q) => compact(percentileSorted(s, q)));
}

/**
 * TTFT by turn: a box (min, p25, p50, p75, max) per turn plus every request as a dot (points =
 * dots + boxes). Turns are labelled from 1 (turn index 0 is turn 1), as traces count them. Only for
 * runs with multi-turn sessions (some turn index ≥ 1); null otherwise.
 */
export function perTurnTtftChart(requests: readonly RequestPoint[]): ChartSpec | null {
  const groups = ttftByTurn(requests);
  if (groups.length < 2) return null;
  const all = groups.flatMap((values, turn) => values.map((v) => [turn, compact(v)]));
  const dots = downsample(all) as number[][];
  const title = 'TTFT by turn (multi-turn sessions)';
  const option: EChartsOption = {
    ...baseOption(title, subtitle(countSubtitle(dots.length, all.length), 'box: min, p25, p50, p75, max')),
    xAxis: {
      type: 'category',
      name: 'turn (the first is 1, as traces count them)',
      nameLocation: 'middle',
      nameGap: 30,
      data: groups.map((values, i) => `${i + 1} (n=${values.length})`),
    },
    yAxis: valueAxis('time to first token (ms)', { nameGap: 62 }),
    series: [
      { type: 'boxplot', name: 'TTFT', data: groups.map(boxOf), itemStyle: { color: '#e8eef9' } },
      {
        type: 'scatter',
        name: 'request',
        symbolSize: 4,
        itemStyle: { color: '#c23531', opacity: 0.7 },
        data: dots,
      },
    ],
  };
  return { id: 'ttft-by-turn', title, option, points: dots.length + groups.length };
}
