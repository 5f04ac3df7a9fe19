/**
 * The parts of `search_history.json` computed from the probes: the recorded configuration, what the
 * planner sees of each probe, the boundary while the search runs, and the client limit.
 */
import { type SearchSpec, SWEPT_DIM_PATH } from './config.js';
import type { ClientLimit, HistoryConfig, HistoryIteration } from './history-types.js';
import type { PlannerConfig, ProbePoint } from './types.js';

/** The history's `config` of a search. */
export function historyConfig(spec: SearchSpec, seed: number): HistoryConfig {
  return {
    search_over: spec.searchOver,
    swept_dim_path: SWEPT_DIM_PATH[spec.searchOver],
    range: { lo: spec.lo, hi: spec.hi },
    kind: spec.searchOver === 'concurrency' ? 'int' : 'real',
    precision: spec.precision,
    max_probes: spec.maxProbes,
    trials: spec.trials,
    sla_filters: spec.slas,
    slo_attainment_fraction: spec.attainmentFraction,
    random_seed: seed,
  };
}

/** What the planner is told about the search of `spec`. */
export function plannerConfig(spec: SearchSpec): PlannerConfig {
  return {
    lo: spec.lo,
    hi: spec.hi,
    precision: spec.precision,
    maxProbes: spec.maxProbes,
    trials: spec.trials,
    integer: spec.searchOver === 'concurrency',
    swept_dim_path: SWEPT_DIM_PATH[spec.searchOver],
  };
}

/** What the planner sees of one probe. */
export function pointOf(it: HistoryIteration): ProbePoint {
  return {
    load: it.load,
    status: it.status,
    slas: it.slas.map((s) => ({
      key: `${s.metric_tag}:${s.stat}`,
      observed: s.observed,
      interval: s.interval,
      margin: s.margin,
      margin_interval: s.margin_interval,
      passed: s.passed,
    })),
    overloaded: it.server_verdict?.status === 'overloaded',
    phase: it.phase,
    first_breach: it.first_breach,
  };
}

/**
 * The client limit of the probe `it` (status `client_limited`): the load the client delivered and,
 * when it was saturated, the `--workers` that may deliver the load asked
 * (ceil(workers × asked / delivered), at least one more; the asked rate is known for a request-rate search).
 */
export function clientLimitOf(it: HistoryIteration, spec: SearchSpec, workers: number): ClientLimit {
  const delivered = it.delivered_request_rate_per_s;
  const saturated = it.client_health.status === 'saturated';
  const ratio =
    spec.searchOver === 'request-rate' && delivered !== null && delivered > 0 ? it.load / delivered : null;
  const suggested = saturated
    ? Math.max(workers + 1, ratio === null ? workers + 1 : Math.ceil(workers * ratio))
    : null;
  const sent = delivered === null ? 'an unknown rate' : `${delivered.toFixed(1)} req/s`;
  return {
    iteration_idx: it.iteration_idx,
    status: it.client_health.status,
    delivered_request_rate_per_s: delivered,
    requested_load: it.load,
    suggested_workers: suggested,
    message: `${it.folder}: the client was ${it.client_health.status} at ${SWEPT_DIM_PATH[spec.searchOver]} ${it.load} and sent ${sent}, so the probe says nothing of the server; the search stops here${suggested === null ? ' (run on a quieter machine, or lower the range)' : `: try --workers ${suggested}`}`,
  };
}
