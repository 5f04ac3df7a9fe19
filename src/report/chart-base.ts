/**
 * The chart model shared by the HTML report, the PNG plots and the comparison page: an id, a title,
 * an echarts option (plain JSON: no functions, so it can be inlined in HTML and rendered by SSR) and
 * the number of data points drawn.
 */
import type { EChartsOption } from 'echarts';
import { binLayout, runSpanS } from './bins.js';
import { downsampleNote } from './downsample.js';
import type { BinPoint } from './types.js';

/** One chart. */
export interface ChartSpec {
  /** Stable, file-name-safe id (`ttft-over-time`); PNGs are written as `<id>.png`. */
  id: string;
  title: string;
  /** Complete echarts option, JSON-serialisable. */
  option: EChartsOption;
  /** Data points drawn (after downsampling), summed over series. */
  points: number;
  /**
   * Charts of one group zoom and show their tooltips together in the page (echarts `connect`):
   * {@link TIME_GROUP} for every chart over the run's time axis.
   */
  group?: string;
}

/** The group of the charts drawn over the run's time axis ({@link timeAxis}). */
export const TIME_GROUP = 'time';

/** Subtitle parts joined by ` · `, skipping empty ones. */
export function subtitle(...parts: string[]): string {
  return parts.filter((p) => p.length > 0).join(' · ');
}

/** `n requests` plus the downsampling note when `shown < total`. */
export function countSubtitle(shown: number, total: number, noun = 'requests'): string {
  return subtitle(`${total.toLocaleString('en-US')} ${noun}`, downsampleNote(shown, total));
}

/** Title, grid, tooltip and no animation (identical output in the browser and SSR). */
export function baseOption(title: string, sub: string): EChartsOption {
  return {
    animation: false,
    backgroundColor: '#ffffff',
    title: { text: title, subtext: sub, left: 'center', textStyle: { fontSize: 15 } },
    grid: { left: 80, right: 40, top: 70, bottom: 55, containLabel: true },
    tooltip: { trigger: 'item' },
  };
}

/** A value axis with a name placed in the middle. */
export function valueAxis(name: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { type: 'value', name, nameLocation: 'middle', nameGap: 35, scale: true, ...extra };
}

/**
 * The x axis every time chart shares: seconds since the first request started, from 0 to `endS`
 * ({@link timeAxisEndS} of the run's requests), so their times line up when read one above the other
 * and zoom together (same range, {@link TIME_GROUP}).
 */
export function timeAxis(endS: number): Record<string, unknown> {
  return valueAxis('time since first request (s)', { min: 0, max: endS, scale: false });
}

/**
 * The end of the shared time axis: the last response, rounded up to the bins' width (bins.ts), so
 * the last bin of a binned chart is whole.
 */
export function timeAxisEndS(requests: Iterable<BinPoint>): number {
  const layout = binLayout(runSpanS(requests));
  return roundS(layout.count * layout.widthS);
}

/** Rounds to 5 significant digits (keeps the inlined JSON small without changing what is seen). */
export function compact(value: number): number {
  return Number.parseFloat(value.toPrecision(5));
}

/** Rounds seconds to the millisecond. */
export function roundS(value: number): number {
  return Math.round(value * 1000) / 1000;
}
