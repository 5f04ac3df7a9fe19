/**
 * The benchmark window and the arithmetic of samples over it, shared by the summary's
 * `server_metrics` section and the `server_metrics_export.json`/`.csv` files:
 * - a gauge is summarized over the scrapes taken inside the window;
 * - a counter over the scrapes that bracket it (the last one at or before its start, through the
 *   first one at or after its end: the run scrapes right before the profiling phase and right
 *   after it, so the bracket is tight), as the sum of its increases between consecutive scrapes;
 *   a value that went down is a reset (a server restart), after which the new value is the increase
 *   (Prometheus `increase()`); a scrape without the series is skipped.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { parseScrapeLine, type ScrapeLine } from './snapshot.js';

/** The span the summary covers, epoch ns on the records' clock. */
export interface MetricsWindow {
  startNs: bigint;
  endNs: bigint;
  /** What the span is: `first send to last response`, or the fallback when nothing succeeded. */
  basis: string;
}

/** The window's length, s. */
export function windowSeconds(w: MetricsWindow): number {
  return Number(w.endNs - w.startNs) / 1e9;
}

/** A series' value at one scrape: `t` is seconds since the window start (negative before it). */
export interface Point {
  t: number;
  v: number;
}

/** The window-relative time of a scrape, s. */
export function timeIn(w: MetricsWindow, ns: bigint): number {
  return Number(ns - w.startNs) / 1e9;
}

/** Points inside the window (gauges). */
export function insideWindow(points: readonly Point[], w: MetricsWindow): Point[] {
  const end = windowSeconds(w);
  return points.filter((p) => p.t >= 0 && p.t <= end);
}

/**
 * Index range `[lo, hi]` of the time-ordered `times` (s since the window start) that brackets the
 * window: the last at or before its start through the first at or after its end.
 */
export function bracketRange(times: readonly number[], w: MetricsWindow): [number, number] {
  const end = windowSeconds(w);
  let lo = 0;
  for (let i = 0; i < times.length; i++) if ((times[i] as number) <= 0) lo = i;
  let hi = times.length - 1;
  for (let i = times.length - 1; i >= 0; i--) if ((times[i] as number) >= end) hi = i;
  return [lo, hi];
}

/** The points that bracket the window (counters), see {@link bracketRange}. */
export function bracketWindow<P extends { t: number }>(points: readonly P[], w: MetricsWindow): P[] {
  const [lo, hi] = bracketRange(
    points.map((p) => p.t),
    w,
  );
  return points.slice(lo, hi + 1);
}

/** The increase from `prev` to `next` of a counter: the difference, or `next` after a reset. */
export function increase(prev: number, next: number): number {
  return next >= prev ? next - prev : next;
}

/** A counter over bracketing points: total increase, resets, and the per-interval rates (1/s). */
export interface CounterRun {
  delta: number;
  resets: number;
  rates: number[];
}

/** {@link CounterRun} of time-ordered points. */
export function counterRun(points: readonly Point[]): CounterRun {
  let delta = 0;
  let resets = 0;
  const rates: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1] as Point;
    const b = points[i] as Point;
    if (b.v < a.v) resets++;
    const inc = increase(a.v, b.v);
    delta += inc;
    if (b.t > a.t) rates.push(inc / (b.t - a.t));
  }
  return { delta, resets, rates };
}

/**
 * Reads `server_metrics_export.jsonl`.
 * @returns its lines in file order.
 * @throws {Error} naming the file and line of a line that is not a scrape line.
 */
export async function readScrapeLines(file: string): Promise<ScrapeLine[]> {
  const out: ScrapeLine[] = [];
  const input = createReadStream(file);
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let n = 0;
  try {
    for await (const text of lines) {
      n++;
      if (text.trim() === '') continue;
      try {
        out.push(parseScrapeLine(text));
      } catch (err) {
        throw new Error(`${file}:${n}: not a scrape line (${(err as Error).message})`);
      }
    }
  } finally {
    lines.close();
    input.destroy();
  }
  return out;
}

/** Scrape lines by endpoint URL, each list in time order. */
export function byEndpoint(lines: readonly ScrapeLine[]): Map<string, ScrapeLine[]> {
  const out = new Map<string, ScrapeLine[]>();
  for (const line of lines) {
    const list = out.get(line.endpoint_url) ?? [];
    list.push(line);
    out.set(line.endpoint_url, list);
  }
  for (const list of out.values()) list.sort((a, b) => (a.timestamp_ns < b.timestamp_ns ? -1 : 1));
  return out;
}
