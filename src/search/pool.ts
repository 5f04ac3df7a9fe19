/**
 * The probes of one load, pooled: a load probed several times (`--num-profile-runs`, or a re-probe
 * of a boundary end) is judged on the mean of its trials' SLO margins, with a 95 % interval that
 * narrows as trials are added.
 */
import type { ProbePhase, ProbePoint, SlaObservation } from './types.js';

/** One SLO's pooled margin at one load (relative to the threshold, positive passes; see {@link SlaObservation}). */
export interface PooledMargin {
  key: string;
  /** Mean of the trials' margins; null when a trial had no observed value. */
  mean: number | null;
  /** The 95 % interval of the mean; a null end is unbounded. */
  low: number | null;
  high: number | null;
}

/** Every judged probe of one load. */
export interface PooledLoad {
  load: number;
  /** Indices (into the planner's points) of its probes, in order. */
  probes: number[];
  trials: number;
  /** The phase of its first probe. */
  phase: ProbePhase;
  margins: PooledMargin[];
  /** More than half its trials failed for a reason that is not an SLO (server overloaded, attainment, nothing succeeded). */
  otherFailure: boolean;
  /** More than half its trials had the server verdict `overloaded`. */
  overloaded: boolean;
  passed: boolean;
}

/**
 * Student's t quantile for a two-sided 95 % interval with `df` degrees of freedom (df 1 to 10 from
 * the table, then 2.228 down to 1.96 by the usual 1 + 2.5/df correction of the normal quantile).
 */
export function t95(df: number): number {
  const table = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
  return table[df - 1] ?? 1.96 * (1 + 2.5 / (df * 4));
}

/**
 * Groups the judged probes (not `interrupted`, not `client_limited`) by load, ascending.
 * A margin's interval: with one trial, the run's own (from its percentile's 95 % interval); with
 * k trials, the run intervals' mean half-widths shrunk by √k, widened to Student's t over the k
 * trial margins when that is wider (the runs' intervals assume independent requests; the spread
 * of repeated trials does not).
 */
export function poolByLoad(points: readonly ProbePoint[]): PooledLoad[] {
  const byLoad = new Map<number, number[]>();
  points.forEach((p, i) => {
    if (p.status === 'interrupted' || p.status === 'client_limited') return;
    const list = byLoad.get(p.load) ?? [];
    list.push(i);
    byLoad.set(p.load, list);
  });
  return [...byLoad.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([load, probes]) => pooledLoad(load, probes, points));
}

function pooledLoad(load: number, probes: number[], points: readonly ProbePoint[]): PooledLoad {
  const trials = probes.map((i) => points[i] as ProbePoint);
  const first = trials[0] as ProbePoint;
  const margins = first.slas.map((s, j) =>
    pooledMargin(
      s.key,
      trials.map((t) => t.slas[j]),
    ),
  );
  const other = trials.filter((t) => t.status === 'fail' && t.slas.every((s) => s.passed)).length;
  const overloaded = trials.filter((t) => t.overloaded).length;
  const otherFailure = other * 2 > trials.length;
  return {
    load,
    probes,
    trials: trials.length,
    phase: first.phase ?? 'bracket',
    margins,
    otherFailure,
    overloaded: overloaded * 2 > trials.length,
    passed: !otherFailure && margins.every((m, j) => marginPasses(m, trials, j)),
  };
}

/** A pooled margin passes above 0; at exactly 0 only when every trial passed (an `le`/`ge` SLO met at its threshold). */
function marginPasses(m: PooledMargin, trials: ProbePoint[], j: number): boolean {
  if (m.mean === null) return false;
  if (m.mean !== 0) return m.mean > 0;
  return trials.every((t) => t.slas[j]?.passed === true);
}

function pooledMargin(key: string, obs: Array<SlaObservation | undefined>): PooledMargin {
  const margins = obs.map((o) => o?.margin ?? null);
  if (margins.some((m) => m === null)) return { key, mean: null, low: null, high: null };
  const values = margins as number[];
  const k = values.length;
  const mean = values.reduce((a, b) => a + b, 0) / k;
  const run = runHalfWidths(obs, values);
  let low = run.low === null ? null : mean - run.low / Math.sqrt(k);
  let high = run.high === null ? null : mean + run.high / Math.sqrt(k);
  if (k >= 2) {
    const sd = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / (k - 1));
    const half = (t95(k - 1) * sd) / Math.sqrt(k);
    low = low === null ? mean - half : Math.min(low, mean - half);
    high = high === null ? mean + half : Math.max(high, mean + half);
  }
  return { key, mean, low, high };
}

/** The mean distance from each trial's margin to its interval's ends; null when any end is unbounded. */
function runHalfWidths(
  obs: Array<SlaObservation | undefined>,
  values: number[],
): { low: number | null; high: number | null } {
  let low: number | null = 0;
  let high: number | null = 0;
  obs.forEach((o, i) => {
    const m = values[i] as number;
    const lo = o?.margin_interval?.low ?? null;
    const hi = o?.margin_interval?.high ?? null;
    low = low === null || lo === null ? null : low + Math.max(0, m - lo);
    high = high === null || hi === null ? null : high + Math.max(0, hi - m);
  });
  const k = values.length;
  return { low: low === null ? null : low / k, high: high === null ? null : high / k };
}
