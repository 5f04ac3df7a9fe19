/**
 * The boundary of a search as the probes so far place it: the largest passing load below the first
 * failing one, the SLO that binds there, the fitted crossing, and whether the drop between the two
 * is a cliff (the margin jumps) or a point on a smooth curve.
 */
import { fitNonIncreasing, zeroCrossing } from './isotonic.js';
import type { PooledLoad } from './pool.js';
import type { BoundarySummary, BoundaryType, PlannerConfig, ProbePoint } from './types.js';

/**
 * A cliff needs the binding margin to fall by at least this much (a quarter of the threshold)
 * between the last pass and the first fail …
 */
export const CLIFF_MARGIN_DROP = 0.25;

/** … and that fall, per unit of log-load, to be at least this many times the slope just below the pass. */
export const CLIFF_SLOPE_RATIO = 5;

/** The bracket in the pooled loads: the first failing load, and the last passing one below it. */
export interface Bracket {
  pass: PooledLoad | undefined;
  fail: PooledLoad | undefined;
}

/** Finds the {@link Bracket} of loads sorted ascending. */
export function bracketOf(pools: readonly PooledLoad[]): Bracket {
  const at = pools.findIndex((p) => !p.passed);
  if (at < 0) return { pass: pools.at(-1), fail: undefined };
  return { pass: at > 0 ? pools[at - 1] : undefined, fail: pools[at] };
}

/** A rise of the margin smaller than this (5 % of the threshold) is not called non-monotonic, however sure. */
export const MATERIAL_RISE = 0.05;

/**
 * Some SLO's margin is higher at a probed load than at a lower one by more than both intervals allow,
 * and by at least {@link MATERIAL_RISE}.
 */
export function marginsRise(pools: readonly PooledLoad[]): boolean {
  return pools.some((a, i) =>
    pools.slice(i + 1).some((b) =>
      b.margins.some((m, j) => {
        const high = a.margins[j]?.high ?? null;
        return high !== null && m.low !== null && m.low > high + MATERIAL_RISE;
      }),
    ),
  );
}

/** Every SLO's pass end of the interval is above 0: the pass is sure. */
export function passIsSure(p: PooledLoad): boolean {
  return p.margins.every((m) => m.low !== null && m.low > 0);
}

/** The failure is sure: not an SLO (overloaded, nothing succeeded), or some SLO's optimistic end is below 0. */
export function failIsSure(f: PooledLoad): boolean {
  return f.otherFailure || f.margins.some((m) => m.high !== null && m.high < 0);
}

/**
 * The fitted (non-increasing in load) margin of SLO `j` at every pooled load with a value, as
 * `[load, fitted]` pairs ascending.
 */
export function fittedMargins(pools: readonly PooledLoad[], j: number): Array<[number, number]> {
  const known = pools.filter((p) => p.margins[j]?.mean !== null && p.margins[j] !== undefined);
  const fit = fitNonIncreasing(
    known.map((p) => p.margins[j]?.mean as number),
    known.map((p) => p.trials),
  );
  return known.map((p, i) => [p.load, fit[i] as number]);
}

/**
 * A straight line between the bracket's fitted margins is trusted only while both lie within this
 * of zero (the observed value within twice the threshold): past it the curve is a knee or a cliff,
 * and the line's crossing hugs the passing end.
 */
export const TRUSTED_MARGIN = 1;

/**
 * Where SLO `j`'s fitted margin crosses zero between the bracket's loads; null when it does not, or
 * when an end's fitted margin lies beyond {@link TRUSTED_MARGIN}.
 */
export function fittedCrossing(pools: readonly PooledLoad[], j: number, b: Bracket): number | null {
  if (b.pass === undefined || b.fail === undefined) return null;
  const fit = new Map(fittedMargins(pools, j));
  const mLo = fit.get(b.pass.load);
  const mHi = fit.get(b.fail.load);
  if (mLo === undefined || mHi === undefined) return null;
  if (Math.abs(mLo) > TRUSTED_MARGIN || Math.abs(mHi) > TRUSTED_MARGIN) return null;
  return zeroCrossing(b.pass.load, mLo, b.fail.load, mHi);
}

/**
 * The SLO that binds: at the first fail, the one with the lowest margin (or `server_verdict` /
 * the breach's metric when the fail was not an SLO's); with no fail, the tightest at the top load.
 * @returns its index among the SLOs (−1 for a non-SLO reason) and its key.
 */
export function bindingOf(b: Bracket, points: readonly ProbePoint[]): { index: number; key: string | null } {
  const at = b.fail ?? b.pass;
  if (at === undefined) return { index: -1, key: null };
  if (b.fail?.otherFailure === true) {
    const breach = points[b.fail.probes.at(-1) as number]?.first_breach;
    return { index: -1, key: b.fail.overloaded ? 'server_verdict' : (breach?.metric_tag ?? null) };
  }
  let index = -1;
  let lowest = Number.POSITIVE_INFINITY;
  at.margins.forEach((m, j) => {
    const v = m.mean ?? Number.NEGATIVE_INFINITY;
    if (index < 0 || v < lowest) {
      index = j;
      lowest = v;
    }
  });
  return { index, key: at.margins[index]?.key ?? null };
}

/** A cliff: the binding margin falls by {@link CLIFF_MARGIN_DROP} or more, {@link CLIFF_SLOPE_RATIO}× steeper than below. */
export function isCliff(pools: readonly PooledLoad[], b: Bracket, j: number): boolean {
  if (b.pass === undefined || b.fail === undefined || j < 0) return false;
  const mp = b.pass.margins[j]?.mean ?? null;
  const mf = b.fail.margins[j]?.mean ?? null;
  if (mp === null) return false;
  const drop = mf === null ? Number.POSITIVE_INFINITY : mp - mf;
  if (drop < CLIFF_MARGIN_DROP) return false;
  const slope = drop / Math.log(b.fail.load / b.pass.load);
  const fit = fittedMargins(pools, j).filter(([load]) => load <= b.pass!.load);
  const below = fit.at(-2);
  const atPass = fit.at(-1);
  if (below === undefined || atPass === undefined) return true;
  const slopeBelow = Math.max(0, (below[1] - atPass[1]) / Math.log(atPass[0] / below[0]));
  return slope >= CLIFF_SLOPE_RATIO * slopeBelow;
}

/**
 * The boundary summary of the probes so far.
 * @param type the boundary type when the search is done; null while it runs.
 */
export function boundaryOf(
  config: PlannerConfig,
  pools: readonly PooledLoad[],
  points: readonly ProbePoint[],
  type: BoundaryType | null,
): BoundarySummary {
  const b = bracketOf(pools);
  const binding = bindingOf(b, points);
  const p = b.pass;
  const f = b.fail;
  const crossing = type === 'point' && binding.index >= 0 ? fittedCrossing(pools, binding.index, b) : null;
  return {
    swept_dim_path: config.swept_dim_path,
    boundary_type: type,
    feasible_max:
      p === undefined ? null : { value: p.load, iteration_idx: representative(p, points, 'pass') },
    infeasible_min: f === undefined ? null : infeasibleOf(f, points),
    binding_constraint: binding.key,
    fitted_boundary: crossing,
    relative_gap: p === undefined || f === undefined ? null : (f.load - p.load) / p.load,
    confirmed: p === undefined || f === undefined ? null : passIsSure(p) && failIsSure(f),
    non_monotonic: marginsRise(pools),
  };
}

/** The latest probe of a pooled load whose own status is `status` (else its latest probe). */
function representative(pool: PooledLoad, points: readonly ProbePoint[], status: 'pass' | 'fail'): number {
  const own = pool.probes.filter((i) => points[i]?.status === status);
  return (own.at(-1) ?? pool.probes.at(-1)) as number;
}

/**
 * The first failing load with what it breached: its latest trial that failed on its own (one always
 * did: a pooled fail needs a trial below the threshold, without a value, or failed for another reason).
 */
function infeasibleOf(
  f: PooledLoad,
  points: readonly ProbePoint[],
): NonNullable<BoundarySummary['infeasible_min']> {
  const at = representative(f, points, 'fail');
  return { value: f.load, iteration_idx: at, first_breach: points[at]?.first_breach ?? null };
}
