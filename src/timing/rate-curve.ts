/**
 * The shape of an open-loop rate over time, and the time warp that puts arrivals on it. A curve is
 * piecewise linear in a factor of a nominal rate: 1 throughout for a constant `--request-rate`, a
 * rise to 1 for `--request-rate-ramp-duration`, the `qps` of each point of `--request-rate-series`
 * (whose nominal rate is 1/s). After its last point a curve holds that point's factor.
 *
 * The arrival process (constant, Poisson, gamma: ./arrivals.ts) draws its intervals at the nominal
 * rate; {@link RateCurve.warp} stretches each one so that the k-th arrival comes when the integral of
 * the factor since time zero reaches the k-th arrival of the unwarped process (time warping, the
 * textbook way of turning a homogeneous process into one of a given rate function: Lewis & Shedler,
 * "Simulation of nonhomogeneous Poisson processes by thinning", Naval Research Logistics Quarterly
 * 26(3), 1979, §1). A stretch where the rate is 0 takes no units, so an arrival never falls inside
 * one: it comes when the rate turns positive again and the integral reaches its unit.
 */

/** One point of `--request-rate-series`, as AIPerf's file writes it: the rate `qps` (requests/s) at `time_s` (s). */
export interface RateSeriesPoint {
  /** Seconds after the start of the profiling phase (the first point is at 0, then increasing). */
  time_s: number;
  /** Requests/s at that time (>= 0); linear in between, held after the last point. */
  qps: number;
}

/** `--request-rate-series` as read: the file and its points, checked (config/rate-series.ts). */
export interface RateSeries {
  /** The file as given. */
  file: string;
  /** At least one point, the first at time_s 0, time_s increasing, qps >= 0 and not all 0. */
  points: RateSeriesPoint[];
}

/** One corner of a curve: the factor at `atNs` ns after time zero. */
interface Knot {
  atNs: number;
  factor: number;
}

/** The points a series' description lists before it says how many more there are. */
const DESCRIBED_POINTS = 4;

/** A rate over time as a piecewise-linear factor of a nominal rate. */
export class RateCurve {
  private constructor(
    private readonly knots: readonly [Knot, ...Knot[]],
    /** The schedule in words for a series; null for a constant or ramped rate. */
    readonly description: string | null,
  ) {}

  /** Factor 1 throughout: the nominal rate, constant. */
  static constant(): RateCurve {
    return new RateCurve([{ atNs: 0, factor: 1 }], null);
  }

  /**
   * `--request-rate-ramp-duration`: the factor rises linearly from 0 to 1 over `rampNs`, floored at
   * 0.01 (so the first arrivals are not unboundedly far apart), then holds 1.
   */
  static ramp(rampNs: number): RateCurve {
    const floor = 0.01;
    return new RateCurve(
      [
        { atNs: 0, factor: floor },
        { atNs: floor * rampNs, factor: floor },
        { atNs: rampNs, factor: 1 },
      ],
      null,
    );
  }

  /** `--request-rate-series` over a nominal rate of 1/s: the factor is each point's qps. */
  static series(series: RateSeries): RateCurve {
    const knots = series.points.map((p) => ({ atNs: p.time_s * 1e9, factor: p.qps }));
    const [first, ...rest] = knots;
    if (first === undefined) throw new Error(`${series.file}: a rate series needs at least one point`);
    return new RateCurve([first, ...rest], describeSeries(series));
  }

  /** The factor `elapsedNs` after time zero: linear between knots, held after the last. */
  factorAt(elapsedNs: number): number {
    const i = this.segmentOf(elapsedNs);
    const a = this.knots[i] as Knot;
    const b = this.knots[i + 1];
    if (b === undefined || elapsedNs <= a.atNs) return a.factor;
    return a.factor + ((b.factor - a.factor) * (elapsedNs - a.atNs)) / (b.atNs - a.atNs);
  }

  /**
   * When the first arrival comes, ns after time zero: at once, unless the curve starts at 0; then
   * when the rate first turns positive. Infinity for a curve that is 0 throughout.
   */
  firstArrivalNs(): number {
    const { knots } = this;
    for (let i = 0; i < knots.length; i++) {
      const k = knots[i] as Knot;
      if (k.factor > 0) return i === 0 ? 0 : (knots[i - 1] as Knot).atNs;
    }
    return Number.POSITIVE_INFINITY;
  }

  /**
   * The earliest time `t >= fromNs` at which the integral of the factor from `fromNs` reaches
   * `nominalNs` (an interval drawn at the nominal rate), ns after time zero; Infinity when the curve
   * never gets there (it ends at 0). With factor 1 it is exactly `fromNs + nominalNs`.
   */
  warp(fromNs: number, nominalNs: number): number {
    if (!(nominalNs > 0)) return fromNs;
    let need = nominalNs;
    let t = fromNs;
    for (let i = this.segmentOf(fromNs); ; i++) {
      const c = this.factorAt(t);
      const next = this.knots[i + 1];
      if (next === undefined) return c > 0 ? t + need / c : Number.POSITIVE_INFINITY;
      const span = next.atNs - t;
      const slope = (next.factor - c) / span;
      const area = c * span + (slope * span * span) / 2;
      if (area >= need) return t + stepWithin(c, slope, need);
      need -= area;
      t = next.atNs;
    }
  }

  /** Index of the last knot at or before `elapsedNs` (0 before the first). */
  private segmentOf(elapsedNs: number): number {
    let i = 0;
    while (i + 1 < this.knots.length && (this.knots[i + 1] as Knot).atNs <= elapsedNs) i++;
    return i;
  }
}

/**
 * The `x >= 0` where `c·x + slope·x²/2 = area` (the integral of a factor starting at `c` and
 * changing by `slope` per ns), written so that it neither cancels nor divides by a zero slope.
 */
function stepWithin(c: number, slope: number, area: number): number {
  if (slope === 0) return area / c;
  const root = Math.sqrt(Math.max(0, c * c + 2 * slope * area));
  return (2 * area) / (c + root);
}

/** `series rate.json: 0 s 10/s → 3 s 40/s → 5 s 40/s, then held`, the first few points. */
function describeSeries(series: RateSeries): string {
  const shown = series.points.slice(0, DESCRIBED_POINTS).map((p) => `${p.time_s} s ${p.qps}/s`);
  const more = series.points.length - shown.length;
  const tail = more > 0 ? ` → … (${more} more points)` : '';
  return `series ${series.file}: ${shown.join(' → ')}${tail}, then held`;
}
