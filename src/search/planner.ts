/**
 * The search's planner: from the probes made so far (and nothing else, so a resumed search picks
 * up where it stopped), the next load to probe or the answer.
 *
 * 1. **Bracket**: probe the range's low end, then double the load (up to the high end) until a
 *    probe fails (AIPerf's exponential probe, docs/sweeping/find-max-passing-concurrency.md).
 * 2. **Narrow**: between the last pass and the first fail, fit each SLO's margin against load
 *    monotonically (PAVA, ./isotonic.ts), take the lowest load where a fitted margin crosses zero,
 *    and probe just past it on the side the last probe did not settle (so two probes can close the
 *    bracket to the precision); bisect in log-load when nothing crosses, when an end's margin is
 *    too far from zero for a straight line to mean anything (a knee or a cliff), or when two
 *    narrowing probes in a row landed on the same side (the Illinois guard against a stalled end).
 * 3. **Confirm**: once the bracket is within `--search-precision`, re-probe an end whose 95 %
 *    interval does not clear the SLO (up to {@link MAX_REPROBES} more trials each); pooled
 *    trials may move the bracket, and the search narrows again.
 * 4. **Answer**: the largest passing load and the first failing one, a cliff when the margin jumps
 *    between them (./boundary.ts), `none-in-range` when the high end passes, `all-fail` when
 *    the low end fails.
 *
 * A `client_limited` probe ends the search at once: the load was not delivered, so no verdict on
 * the server can follow from it.
 */
import {
  type Bracket,
  bindingOf,
  boundaryOf,
  bracketOf,
  failIsSure,
  fittedCrossing,
  isCliff,
  passIsSure,
} from './boundary.js';
import { type PooledLoad, poolByLoad } from './pool.js';
import type {
  BoundarySummary,
  BoundaryType,
  ConvergenceReason,
  PlannerConfig,
  PlanStep,
  ProbePhase,
  ProbePoint,
} from './types.js';

/** More trials a boundary end gets, beyond `--num-profile-runs`, while its interval straddles the SLO. */
export const MAX_REPROBES = 2;

/** A narrowing probe aims this fraction of the precision past the fitted crossing. */
const AIM_PAST = 0.45;

/** A narrowing probe stays at least this fraction of the bracket's log-width from either end. */
const SAFEGUARD = 0.1;

/**
 * The next step of the search.
 * @param points every probe so far, in the order made (interrupted ones included: they are not judged).
 */
export function nextStep(config: PlannerConfig, points: readonly ProbePoint[]): PlanStep {
  const pools = poolByLoad(points);
  if (points.some((p) => p.status === 'client_limited'))
    return done(config, pools, points, 'client_limited', null);
  const step = chooseStep(config, pools, points);
  const judged = points.filter((p) => p.status !== 'interrupted').length;
  if (step.kind === 'probe' && judged >= config.maxProbes) {
    const b = bracketOf(pools);
    return done(config, pools, points, 'max_probes', b.pass && b.fail ? typeOf(pools, b, points) : null);
  }
  return step;
}

/**
 * The boundary as the probes so far place it (for the history while the search runs): the
 * current ends, `boundary_type` null.
 */
export function currentBoundary(config: PlannerConfig, points: readonly ProbePoint[]): BoundarySummary {
  return boundaryOf(config, poolByLoad(points), points, null);
}

function chooseStep(config: PlannerConfig, pools: PooledLoad[], points: readonly ProbePoint[]): PlanStep {
  const first = pools[0];
  if (first === undefined) return probe(config, config.lo, 'bracket');
  const short = pools.find((p) => p.trials < config.trials);
  if (short !== undefined) return probe(config, short.load, short.phase);
  const b = bracketOf(pools);
  if (b.fail === undefined) {
    const top = b.pass as PooledLoad;
    if (top.load >= config.hi) return done(config, pools, points, 'none_in_range', 'none-in-range');
    return probe(config, grow(config, top.load), 'bracket');
  }
  if (b.pass === undefined) {
    if (!failIsSure(b.fail) && b.fail.trials < config.trials + MAX_REPROBES)
      return probe(config, b.fail.load, 'confirm');
    return done(config, pools, points, 'all_fail', 'all-fail');
  }
  if (!closeEnough(config, b.pass.load, b.fail.load))
    return probe(config, narrowTo(config, pools, b, points), 'narrow');
  const unsure = reprobe(config, b);
  if (unsure !== null) return probe(config, unsure, 'confirm');
  return done(config, pools, points, 'precision_reached', typeOf(pools, b, points));
}

/** The end of the bracket to probe again: one whose interval does not clear the SLO, with trials left. */
function reprobe(config: PlannerConfig, b: Bracket): number | null {
  const limit = config.trials + MAX_REPROBES;
  const p = b.pass as PooledLoad;
  const f = b.fail as PooledLoad;
  if (!passIsSure(p) && p.trials < limit) return p.load;
  if (!failIsSure(f) && f.trials < limit) return f.load;
  return null;
}

/** The bracket is within the precision (whole loads: at most 1 apart, or within the precision). */
function closeEnough(config: PlannerConfig, pass: number, fail: number): boolean {
  if (config.integer) return fail - pass <= Math.max(1, Math.floor(config.precision * pass));
  return (fail - pass) / pass <= config.precision * (1 + 1e-9);
}

/** The next bracketing load: twice the last (whole loads: at least one more), at most the range's top. */
function grow(config: PlannerConfig, load: number): number {
  const next = config.integer ? Math.max(load + 1, Math.ceil(load * 2)) : load * 2;
  return Math.min(config.hi, next);
}

/** The narrowing probe's load (see the module comment). */
function narrowTo(
  config: PlannerConfig,
  pools: PooledLoad[],
  b: Bracket,
  points: readonly ProbePoint[],
): number {
  const lo = (b.pass as PooledLoad).load;
  const hi = (b.fail as PooledLoad).load;
  const mid = Math.sqrt(lo * hi);
  const last = lastNarrowOutcomes(points, pools);
  let target = mid;
  const crossing = lowestCrossing(pools, b);
  if (crossing !== null && !(last.length === 2 && last[0] === last[1])) {
    const side = last.at(-1);
    const past = side === undefined ? 0 : side ? AIM_PAST : -AIM_PAST;
    target = crossing * (1 + past * config.precision);
  }
  const span = Math.log(hi / lo);
  const clamped = Math.min(
    Math.max(target, lo * Math.exp(SAFEGUARD * span)),
    lo * Math.exp((1 - SAFEGUARD) * span),
  );
  return inside(config, clamped, lo, hi);
}

/** The lowest load where some SLO's fitted margin crosses zero inside the bracket; null when none does. */
function lowestCrossing(pools: PooledLoad[], b: Bracket): number | null {
  const first = pools[0];
  if (first === undefined) return null;
  let lowest: number | null = null;
  first.margins.forEach((_, j) => {
    const x = fittedCrossing(pools, j, b);
    if (x !== null && (lowest === null || x < lowest)) lowest = x;
  });
  return lowest;
}

/** Whether each of the last two narrowing probes' loads passed (pooled), oldest first. */
function lastNarrowOutcomes(points: readonly ProbePoint[], pools: PooledLoad[]): boolean[] {
  const passed = new Map(pools.map((p) => [p.load, p.passed]));
  const narrow = points.filter((p) => p.phase === 'narrow' && passed.has(p.load));
  return narrow.slice(-2).map((p) => passed.get(p.load) as boolean);
}

/** `load` as a probe load strictly inside (lo, hi): whole for concurrency, else 4 significant digits. */
function inside(config: PlannerConfig, load: number, lo: number, hi: number): number {
  if (config.integer) return Math.min(hi - 1, Math.max(lo + 1, Math.round(load)));
  const rounded = Number(load.toPrecision(4));
  return rounded > lo && rounded < hi ? rounded : load;
}

function typeOf(pools: PooledLoad[], b: Bracket, points: readonly ProbePoint[]): BoundaryType {
  return isCliff(pools, b, bindingOf(b, points).index) ? 'cliff' : 'point';
}

function probe(config: PlannerConfig, load: number, phase: ProbePhase): PlanStep {
  const clamped = Math.min(config.hi, Math.max(config.lo, load));
  return { kind: 'probe', load: clamped, phase };
}

function done(
  config: PlannerConfig,
  pools: PooledLoad[],
  points: readonly ProbePoint[],
  reason: ConvergenceReason,
  type: BoundaryType | null,
): PlanStep {
  return { kind: 'done', reason, boundary: boundaryOf(config, pools, points, type) };
}
