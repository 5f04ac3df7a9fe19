/**
 * The per-turn chart, drawn from the summary's `per_turn` section (metrics/per-turn.ts): TTFT p50
 * and p90 by turn index (request latency when the run did not stream) on the left axis, and the
 * server-reported prefix-cache hit fraction on the right one. A bucket whose server reported no
 * cached tokens has no cache point (unknown, not 0).
 */
import type { EChartsOption } from 'echarts';
import type { PerTurnSection, TurnEntry } from '../metrics/per-turn.js';
import { baseOption, type ChartSpec, compact, subtitle, valueAxis } from './chart-base.js';

/** echarts' blank value: no point for that category. */
const GAP = '-';

function statOf(t: TurnEntry, tag: 'time_to_first_token' | 'request_latency', stat: 'p50' | 'p90') {
  const d = t[tag];
  return d === undefined ? GAP : compact(d[stat]);
}

/**
 * TTFT p50/p90 and the cache hit fraction (%) by turn index, one category per bucket (`0`, `1`, …,
 * `10+`, each with its request count). Null without a section or with fewer than two buckets.
 */
export function perTurnChart(section: PerTurnSection | null): ChartSpec | null {
  if (section === null || section.turns.length < 2) return null;
  const turns = section.turns;
  const streamed = turns.some((t) => t.time_to_first_token !== undefined);
  const tag = streamed ? 'time_to_first_token' : 'request_latency';
  const name = streamed ? 'TTFT' : 'request latency';
  const hit = turns.map((t) => (t.cache.hit_ratio === null ? GAP : compact(t.cache.hit_ratio * 100)));
  const hasCache = hit.some((h) => h !== GAP);
  const series: NonNullable<EChartsOption['series']> = [
    { type: 'line', name: `${name} p50`, yAxisIndex: 0, data: turns.map((t) => statOf(t, tag, 'p50')) },
    { type: 'line', name: `${name} p90`, yAxisIndex: 0, data: turns.map((t) => statOf(t, tag, 'p90')) },
  ];
  if (hasCache)
    series.push({
      type: 'bar',
      name: 'cached / prompt tokens (%)',
      yAxisIndex: 1,
      data: hit,
      itemStyle: { color: '#9fc5e8', opacity: 0.6 },
      z: 1,
    });
  const title = `${name} and prefix-cache hits by turn`;
  const requests = turns.reduce((n, t) => n + t.requests, 0);
  const note = subtitle(
    `${requests.toLocaleString('en-US')} requests`,
    `turn index from 0; ${section.bucket_cap}+ in one bucket`,
    hasCache ? 'bars: server-reported cached_tokens / prompt_tokens' : 'no cached_tokens reported',
  );
  const yAxis = [valueAxis(`${name} (ms)`, { min: 0, scale: false, nameGap: 62 })];
  if (hasCache)
    yAxis.push(
      valueAxis('cache hit (%)', { min: 0, max: 100, scale: false, nameGap: 45, splitLine: { show: false } }),
    );
  const option: EChartsOption = {
    ...baseOption(title, note),
    tooltip: { trigger: 'axis' },
    legend: { top: 55, itemGap: 24 },
    grid: { left: 80, right: hasCache ? 80 : 40, top: 95, bottom: 55, containLabel: true },
    xAxis: {
      type: 'category',
      name: 'turn index (requests)',
      nameLocation: 'middle',
      nameGap: 30,
      data: turns.map((t) => `${t.label} (n=${t.requests})`),
    },
    yAxis: yAxis as EChartsOption['yAxis'],
    series,
  };
  return { id: 'per-turn', title, option, points: turns.length * series.length };
}
