/**
 * The search planner (`nextStep`, the function `tokenload search` asks for every probe) driven to
 * its answer against server models whose boundary is known: a smooth knee, a cliff, a whole-number
 * capacity, an all-failing and an all-passing range, noise, a client that cannot deliver the load.
 * Each model answers a probe as a run's summary would: the observed value with a 95 % interval.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitNonIncreasing } from '../../src/search/isotonic.js';
import { nextStep } from '../../src/search/planner.js';
import type { BoundarySummary, PlannerConfig, PlanStep, ProbePoint } from '../../src/search/types.js';

const T = 100; // the SLO: time_to_first_token:p95:lt:100 (ms)

/** A probe as the runner reports it: TTFT p95 `ttftMs` ± `rel` (its interval). */
function observe(load: number, ttftMs: number, rel: number): ProbePoint {
  const margin = (T - ttftMs) / T;
  const low = ttftMs * (1 - rel);
  const high = ttftMs * (1 + rel);
  const passed = margin > 0;
  return {
    load,
    status: passed ? 'pass' : 'fail',
    overloaded: false,
    slas: [
      {
        key: 'time_to_first_token:p95',
        observed: ttftMs,
        interval: { low, high },
        margin,
        margin_interval: { low: (T - high) / T, high: (T - low) / T },
        passed,
      },
    ],
    first_breach: passed
      ? null
      : { metric_tag: 'time_to_first_token', stat: 'p95', op: 'lt', threshold: T, observed: ttftMs },
  };
}

interface Search {
  step: Extract<PlanStep, { kind: 'done' }>;
  points: ProbePoint[];
  boundary: BoundarySummary;
}

/** Runs the planner to its answer; `model` gives a load's TTFT p95 (ms). */
function search(
  config: Partial<PlannerConfig>,
  model: (load: number, trial: number) => number,
  rel = 0.02,
  status?: (load: number) => ProbePoint['status'] | undefined,
): Search {
  const full: PlannerConfig = {
    lo: 1,
    hi: 1000,
    precision: 0.05,
    maxProbes: 40,
    trials: 1,
    integer: false,
    swept_dim_path: 'request_rate',
    ...config,
  };
  const points: ProbePoint[] = [];
  for (;;) {
    const step = nextStep(full, points);
    if (step.kind === 'done') return { step, points, boundary: step.boundary };
    assert.ok(step.load >= full.lo && step.load <= full.hi, `load ${step.load} outside the range`);
    if (full.integer) assert.ok(Number.isInteger(step.load), `load ${step.load} not whole`);
    const trial = points.filter((p) => p.load === step.load).length;
    const p = observe(step.load, model(step.load, trial), rel);
    p.phase = step.phase;
    const forced = status?.(step.load);
    if (forced !== undefined) p.status = forced;
    points.push(p);
  }
}

const CAP = 137;
/** TTFT of an M/D/1-like knee: 50 ms unloaded, rising as 1/(1 − load/CAP); crosses 100 ms at CAP/2. */
const knee = (x: number) => (x < CAP ? 50 / (1 - x / CAP) : 1e5);
/** A cliff: 50 ms up to CAP, 5 s past it. */
const cliff = (x: number) => (x <= CAP ? 50 : 5000);

test('a smooth knee: the boundary is a point, bracketed within the precision, the fit between the ends', () => {
  const { step, boundary } = search({}, knee);
  assert.equal(step.reason, 'precision_reached');
  assert.equal(boundary.boundary_type, 'point');
  const pass = boundary.feasible_max?.value as number;
  const fail = boundary.infeasible_min?.value as number;
  assert.ok(pass < CAP / 2 && fail >= CAP / 2, `${pass} .. ${fail}`);
  assert.ok((fail - pass) / pass <= 0.05);
  const fitted = boundary.fitted_boundary as number;
  assert.ok(fitted > pass && fitted <= fail, `fitted ${fitted}`);
  assert.equal(boundary.binding_constraint, 'time_to_first_token:p95');
  assert.equal(boundary.infeasible_min?.first_breach?.metric_tag, 'time_to_first_token');
});

test('a cliff: reported as (last pass, first fail) around the capacity, with no fitted point', () => {
  const { step, boundary, points } = search({}, cliff);
  assert.equal(step.reason, 'precision_reached');
  assert.equal(boundary.boundary_type, 'cliff');
  assert.ok((boundary.feasible_max?.value as number) <= CAP);
  assert.ok((boundary.infeasible_min?.value as number) > CAP);
  assert.ok(((boundary.relative_gap as number) ?? 1) <= 0.05);
  assert.equal(boundary.fitted_boundary, null);
  assert.equal(boundary.confirmed, true);
  // Doubling brackets it first: 1, 2, 4, … 256.
  assert.deepEqual(
    points.filter((p) => p.phase === 'bracket').map((p) => p.load),
    [1, 2, 4, 8, 16, 32, 64, 128, 256],
  );
});

test('a whole-number load (concurrency): the boundary is N and N + 1', () => {
  const { boundary } = search({ integer: true, lo: 1, hi: 64, swept_dim_path: 'concurrency' }, (c) =>
    c <= 5 ? 50 : 50 * c,
  );
  assert.equal(boundary.feasible_max?.value, 5);
  assert.equal(boundary.infeasible_min?.value, 6);
});

test('the low end failing is all-fail; the high end passing is none-in-range', () => {
  const low = search({ lo: 200 }, cliff);
  assert.equal(low.step.reason, 'all_fail');
  assert.equal(low.boundary.boundary_type, 'all-fail');
  assert.equal(low.boundary.feasible_max, null);
  const high = search({ hi: 100 }, cliff);
  assert.equal(high.step.reason, 'none_in_range');
  assert.equal(high.boundary.boundary_type, 'none-in-range');
  assert.equal(high.boundary.feasible_max?.value, 100);
  assert.equal(high.boundary.infeasible_min, null);
});

test('an end whose interval straddles the SLO is probed again, and trials are pooled', () => {
  // ±30 % intervals: no single run clears the SLO near the knee.
  const { points, boundary } = search({}, knee, 0.3);
  const fail = boundary.infeasible_min?.value as number;
  const pass = boundary.feasible_max?.value as number;
  const confirms = points.filter((p) => p.phase === 'confirm');
  assert.ok(confirms.length > 0, 'no re-probe');
  assert.ok(confirms.every((p) => p.load === pass || p.load === fail));
  assert.ok(points.filter((p) => p.load === pass).length <= 3, 'more than 2 re-probes');
  assert.equal(boundary.confirmed, false);
});

test('--num-profile-runs 2: every load is probed twice before the next', () => {
  const { points } = search({ trials: 2 }, cliff);
  const counts = new Map<number, number>();
  for (const p of points) counts.set(p.load, (counts.get(p.load) ?? 0) + 1);
  assert.ok([...counts.values()].every((n) => n >= 2));
  for (let i = 0; i < points.length; i += 2) assert.equal(points[i]?.load, points[i + 1]?.load);
});

test('noise: a model with ±5 % jitter per probe still brackets the knee within the precision (3 seeds)', () => {
  for (const seed of [1, 2, 3]) {
    let s = seed;
    const rand = () => {
      s = (s * 16807) % 2147483647;
      return s / 2147483647;
    };
    const { boundary } = search({}, (x) => knee(x) * (1 + 0.05 * (2 * rand() - 1)), 0.05);
    const pass = boundary.feasible_max?.value as number;
    const fail = boundary.infeasible_min?.value as number;
    // The jitter moves the crossing by at most ±5 % in TTFT: in load, 61.5 to 75.2.
    assert.ok(pass >= 58 && pass <= 76 && fail >= 61 && fail <= 80, `seed ${seed}: ${pass} .. ${fail}`);
  }
});

test('a client-limited probe ends the search at once; the budget ends it with the bracket so far', () => {
  const limited = search({}, cliff, 0.02, (x) => (x >= 32 ? 'client_limited' : undefined));
  assert.equal(limited.step.reason, 'client_limited');
  assert.equal(limited.points.length, 6); // 1, 2, 4, 8, 16 and the limited 32
  assert.equal(limited.boundary.feasible_max?.value, 16);
  const budget = search({ maxProbes: 10 }, cliff);
  assert.equal(budget.step.reason, 'max_probes');
  assert.equal(budget.points.length, 10);
  assert.ok(budget.boundary.feasible_max !== null && budget.boundary.infeasible_min !== null);
});

test('an interrupted probe is not judged: the load is probed again', () => {
  const config: PlannerConfig = {
    lo: 10,
    hi: 100,
    precision: 0.05,
    maxProbes: 20,
    trials: 1,
    integer: false,
    swept_dim_path: 'request_rate',
  };
  const first = observe(10, 50, 0.02);
  const cut = { ...observe(20, 5000, 0.02), status: 'interrupted' as const };
  const step = nextStep(config, [first, cut]);
  assert.deepEqual(step, { kind: 'probe', load: 20, phase: 'bracket' });
});

test('margins that rise with load beyond their intervals are flagged non-monotonic; the fit still answers', () => {
  // Slower at 2 to 8 (a cold cache) than at 16 to 64, then the knee.
  const { boundary } = search({}, (x) => (x >= 2 && x <= 8 ? 90 : knee(x)));
  assert.equal(boundary.non_monotonic, true);
  assert.ok((boundary.feasible_max?.value as number) < CAP / 2);
  assert.ok((boundary.infeasible_min?.value as number) >= CAP / 2);
  assert.equal(search({}, knee).boundary.non_monotonic, false);
});

test('a pass end just under the SLO is re-probed until the pooled interval clears it', () => {
  // 95 ms ± 6 %: one run's interval reaches 100.7 ms; the mean of two identical runs is sure.
  const { points, boundary } = search({}, (x) => (x <= CAP ? 95 : 5000), 0.06);
  const pass = boundary.feasible_max?.value as number;
  assert.equal(points.filter((p) => p.load === pass && p.phase === 'confirm').length, 1);
  assert.equal(boundary.confirmed, true);
});

test('the monotone fit pools neighbours that break the order (PAVA), weighted by trials', () => {
  assert.deepEqual(fitNonIncreasing([3, 1, 2, 0], [1, 1, 1, 1]), [3, 1.5, 1.5, 0]);
  assert.deepEqual(fitNonIncreasing([1, 3], [1, 3]), [2.5, 2.5]);
  assert.deepEqual(fitNonIncreasing([4, 3, 2], [1, 1, 1]), [4, 3, 2]);
});

test('pooled trials: the boundary ends point at a probe that itself passed / failed, with its breach', () => {
  // Past 60 the trials disagree: 180, 70 and 60 ms; their mean (103 ms) fails.
  const { boundary, points } = search({ trials: 3 }, (x, trial) =>
    x <= 60 ? 50 : ([180, 70, 60][trial % 3] as number),
  );
  const fail = boundary.infeasible_min;
  const pass = boundary.feasible_max;
  assert.ok(fail !== null && pass !== null);
  assert.equal(points[fail.iteration_idx]?.status, 'fail');
  assert.equal(points[fail.iteration_idx]?.load, fail.value);
  assert.equal(fail.first_breach?.observed, 180);
  assert.equal(points[pass.iteration_idx]?.status, 'pass');
  // Most trials at the failing load passed on their own, yet the load is a fail.
  const trials = points.filter((p) => p.load === fail.value);
  assert.ok(trials.filter((p) => p.status === 'pass').length * 2 > trials.length);
});

test('two trials that disagree are not sure on their mean alone (Student t on the trials, not the normal quantile)', () => {
  // Below the cliff the trials give 90, 96, 93 ms in turn: a mean 7 % under the SLO, but with 2 trials
  // the t interval (12.7 × the spread) straddles it, so the pass end is probed again.
  const { points, boundary } = search(
    { trials: 2 },
    (x, trial) => (x <= CAP ? ([90, 96, 93][trial % 3] as number) : 5000),
    0.001,
  );
  const pass = boundary.feasible_max?.value as number;
  assert.ok(
    points.some((p) => p.load === pass && p.phase === 'confirm'),
    'the pass end was not re-probed',
  );
});
