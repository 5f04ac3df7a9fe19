/**
 * Time-binned series of a run: output token throughput, requests in flight and errors per bin.
 * Bins start at t = 0 (the first request start) and are `widthS` seconds wide.
 */
import type { BinPoint } from './types.js';

/** Default bin width, s. */
export const DEFAULT_BIN_S = 1;

/** Most bins a binned chart draws; longer runs get wider bins. */
export const MAX_BINS = 20_000;

/** A bin layout: `count` bins of `widthS` seconds from 0. */
export interface BinLayout {
  widthS: number;
  count: number;
}

/** Latest end time of any request, s (0 with none). */
export function runSpanS(requests: Iterable<BinPoint>): number {
  let span = 0;
  for (const r of requests) span = Math.max(span, r.endS);
  return span;
}

/**
 * Bins covering `[0, spanS]`: {@link DEFAULT_BIN_S}-second bins, widened to a whole number of
 * seconds when that would exceed {@link MAX_BINS}. At least one bin.
 */
export function binLayout(spanS: number): BinLayout {
  const widthS = Math.max(DEFAULT_BIN_S, Math.ceil(spanS / MAX_BINS));
  return { widthS, count: Math.max(1, Math.ceil(spanS / widthS)) };
}

function binOf(layout: BinLayout, tS: number): number {
  return Math.min(layout.count - 1, Math.max(0, Math.floor(tS / layout.widthS)));
}

/** Adds `amount` to `bins`, spread evenly over `[fromS, toS]` (all into one bin when the interval is empty). */
export function spreadOver(
  bins: number[],
  layout: BinLayout,
  fromS: number,
  toS: number,
  amount: number,
): void {
  if (!(toS > fromS)) {
    bins[binOf(layout, fromS)]! += amount;
    return;
  }
  const rate = amount / (toS - fromS);
  for (let b = binOf(layout, fromS); b <= binOf(layout, toS); b += 1) {
    const lo = Math.max(fromS, b * layout.widthS);
    const hi = b === layout.count - 1 ? toS : Math.min(toS, (b + 1) * layout.widthS);
    if (hi > lo) bins[b]! += rate * (hi - lo);
  }
}

/**
 * Output tokens per second in each bin. Each successful request's output tokens are spread evenly
 * over `[start + TTFT, end]` (the generation phase; `[start, end]` without a TTFT), so bursts of
 * long requests do not pile up at their end time.
 */
export function outputThroughputBins(requests: Iterable<BinPoint>, layout: BinLayout): number[] {
  const bins = new Array<number>(layout.count).fill(0);
  for (const r of requests) {
    if (r.error !== null || r.osl === undefined || r.osl <= 0) continue;
    const from = r.ttftMs === undefined ? r.startS : Math.min(r.endS, r.startS + r.ttftMs / 1000);
    spreadOver(bins, layout, from, r.endS, r.osl);
  }
  return bins.map((tokens) => tokens / layout.widthS);
}

/** Mean number of requests in flight during each bin (time-weighted: Σ overlap / bin width). */
export function inFlightBins(requests: Iterable<BinPoint>, layout: BinLayout): number[] {
  const bins = new Array<number>(layout.count).fill(0);
  for (const r of requests) spreadOver(bins, layout, r.startS, r.endS, r.endS - r.startS);
  return bins.map((busyS) => busyS / layout.widthS);
}

/** Failed requests per bin (by end time), one array per error type, types sorted by name. */
export function errorBins(requests: Iterable<BinPoint>, layout: BinLayout): Map<string, number[]> {
  const byType = new Map<string, number[]>();
  for (const r of requests) {
    if (r.error === null) continue;
    let bins = byType.get(r.error.type);
    if (bins === undefined) {
      bins = new Array<number>(layout.count).fill(0);
      byType.set(r.error.type, bins);
    }
    bins[binOf(layout, r.endS)]! += 1;
  }
  return new Map([...byType.entries()].sort(([a], [b]) => a.localeCompare(b)));
}
