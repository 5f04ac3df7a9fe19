/**
 * The client's own count of requests in flight over time, kept independently of the records: each
 * send adds one, each record removes one, on the run's monotonic clock. It is what the steady-state
 * detector and the server verdict read as "in flight", and what Little's law checks the records
 * against: a request lost between the send and its record, or counted twice, shows up as a gap
 * between this series and the records' throughput × latency.
 *
 * Memory is bounded: the series keeps one checkpoint per `stepNs` (the exact time integral of the
 * count up to it, and the count then), and when it holds {@link MAX_POINTS} it merges pairs and
 * doubles the step, so a day-long replay keeps a few thousand points.
 */

/** Most checkpoints kept before the step doubles. */
export const MAX_POINTS = 8192;

/** One checkpoint of the series: its time, the count's integral up to it, and the count then. */
export interface InFlightPoint {
  /** Monotonic ns. */
  atNs: number;
  /** ∫ in-flight dt from the first change to `atNs`, request·ns. */
  areaNs: number;
  /** Requests in flight at `atNs`. */
  count: number;
}

/** Requests in flight over time: exact integral, checkpoints at a bounded resolution. */
export class InFlightSeries {
  private count = 0;
  private areaNs = 0;
  private lastNs: number | null = null;
  private stepNs: number;
  private nextNs = 0;
  private readonly points: InFlightPoint[] = [];

  /** @param stepNs - checkpoint spacing to start with, ns (> 0); default 50 ms. */
  constructor(stepNs = 50e6) {
    this.stepNs = stepNs;
  }

  /** The count changed by `delta` (+1 a send, −1 a record) at `nowNs` (monotonic ns, non-decreasing). */
  change(nowNs: number, delta: number): void {
    if (this.lastNs === null) {
      this.lastNs = nowNs;
      this.nextNs = nowNs;
    }
    const at = Math.max(nowNs, this.lastNs);
    this.areaNs += this.count * (at - this.lastNs);
    this.lastNs = at;
    if (at >= this.nextNs) this.checkpoint(at);
    this.count += delta;
  }

  /** Requests in flight now. */
  get current(): number {
    return this.count;
  }

  private checkpoint(atNs: number): void {
    this.points.push({ atNs, areaNs: this.areaNs, count: this.count });
    this.nextNs = atNs + this.stepNs;
    if (this.points.length >= MAX_POINTS) this.halve();
  }

  /** Keeps every other checkpoint and doubles the step (the integral stays exact at each kept one). */
  private halve(): void {
    let kept = 0;
    for (let i = 0; i < this.points.length; i += 2) this.points[kept++] = this.points[i] as InFlightPoint;
    this.points.length = kept;
    this.stepNs *= 2;
  }

  /**
   * The checkpoints so far plus one at `endNs` (when later than the last), so the integral covers the
   * whole phase. Empty before the first change.
   */
  snapshot(endNs: number): InFlightPoint[] {
    if (this.lastNs === null) return [];
    const out = this.points.slice();
    const last = out[out.length - 1];
    if (last === undefined || endNs > last.atNs) {
      const at = Math.max(endNs, this.lastNs);
      out.push({ atNs: at, areaNs: this.areaNs + this.count * (at - this.lastNs), count: this.count });
    }
    return out;
  }
}

/**
 * The integral of in-flight requests up to `atNs` (request·ns), interpolated linearly between the
 * checkpoints around it; clamped to the first and last. `points` non-empty, ascending.
 */
export function areaAt(points: readonly InFlightPoint[], atNs: number): number {
  let lo = 0;
  let hi = points.length - 1;
  const first = points[0] as InFlightPoint;
  const last = points[hi] as InFlightPoint;
  if (atNs <= first.atNs) return first.areaNs;
  if (atNs >= last.atNs) return last.areaNs;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if ((points[mid] as InFlightPoint).atNs <= atNs) lo = mid;
    else hi = mid;
  }
  const a = points[lo] as InFlightPoint;
  const b = points[hi] as InFlightPoint;
  return a.areaNs + ((b.areaNs - a.areaNs) * (atNs - a.atNs)) / (b.atNs - a.atNs);
}

/**
 * The time-average of in-flight requests over `[fromNs, toNs]` ({@link areaAt} at both ends); null
 * for an empty window or no checkpoints.
 */
export function meanInFlight(points: readonly InFlightPoint[], fromNs: number, toNs: number): number | null {
  if (points.length === 0 || !(toNs > fromNs)) return null;
  return (areaAt(points, toNs) - areaAt(points, fromNs)) / (toNs - fromNs);
}
