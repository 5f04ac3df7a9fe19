/**
 * The shapes `tokenload search` passes between its parts: the SLOs a probe is judged on, what a
 * probe observed, the planner's next step, and the boundary it reports. The file the search writes,
 * `search_history.json`, is made of these (snake_case, as AIPerf's `search_history.json` in its
 * docs/api/search-history.md; the field names AIPerf defines are kept).
 */

/** What the search varies: `--search-over`. */
export type SearchAxis = 'request-rate' | 'concurrency' | 'speedup';

/** The statistic of an SLO: AIPerf's `--search-sla` stats. */
export type SlaStat = 'avg' | 'p50' | 'p90' | 'p95' | 'p99';

/** The comparison of an SLO: the observed value must be `lt` / `le` / `gt` / `ge` the threshold. */
export type SlaOp = 'lt' | 'le' | 'gt' | 'ge';

/** One SLO a probe must meet, e.g. `time_to_first_token:p95:lt:500` (AIPerf's `--search-sla` 4-tuple). */
export interface Sla {
  /** A metric tag of `profile_export_aiperf.json`, or `request_error_rate` (failed / all, a fraction). */
  metric_tag: string;
  stat: SlaStat;
  op: SlaOp;
  /** In the metric's unit (ms for latencies, a fraction for `request_error_rate`). */
  threshold: number;
  /** The flag that gave it (`--search-sla`, `--ttft-sla-ms`, …). */
  source: string;
}

/** An interval around an observed value, in its unit; a null end is unbounded (too few values to bound it). */
export interface Interval {
  low: number | null;
  high: number | null;
}

/** One SLO as one probe (or the pooled trials at one load) met it. */
export interface SlaObservation {
  /** `<metric_tag>:<stat>`, the SLO's key. */
  key: string;
  /** The value observed; null when the run has none (e.g. no success, no TTFT). */
  observed: number | null;
  /** Its 95 % interval; null when none can be given. */
  interval: Interval | null;
  /**
   * Room left before the threshold, relative to it: `(threshold − observed) / |threshold|` for
   * `lt`/`le`, `(observed − threshold) / |threshold|` for `gt`/`ge` (the threshold itself when it
   * is 0). Positive passes (`le`/`ge`: 0 passes too); null with no observed value.
   */
  margin: number | null;
  /** The margin at the interval's pessimistic and optimistic ends; null where the end is unbounded. */
  margin_interval: { low: number | null; high: number | null } | null;
  passed: boolean;
}

/** The SLO (or rule) a probe failed first, in AIPerf's `first_breach` shape. */
export interface Breach {
  /** A metric tag; `server_verdict` when the server verdict was `overloaded`; `goodput` for the attainment; `request_count` when nothing succeeded. */
  metric_tag: string;
  stat: string;
  op: string;
  threshold: number | string;
  observed: number | string | null;
}

/**
 * How one probe ended:
 * - `pass`: every SLO (and the attainment) met, the server verdict not `overloaded`;
 * - `fail`: an SLO breached, the attainment missed, the server `overloaded`, or nothing succeeded;
 * - `client_limited`: the client verdict was `saturated` or `late`: the load was not delivered, so
 *   the probe is neither a pass nor a fail of the server (the search stops);
 * - `interrupted`: Ctrl-C stopped it (not judged; a resumed search probes the load again).
 */
export type ProbeStatus = 'pass' | 'fail' | 'client_limited' | 'interrupted';

/** What the planner sees of one probe. */
export interface ProbePoint {
  load: number;
  status: ProbeStatus;
  /** One per SLO, in the order of the search's SLOs. */
  slas: SlaObservation[];
  /** The server verdict was `overloaded`. */
  overloaded: boolean;
  /** Why it was made (a repeated trial of a load keeps its first probe's phase); absent is read as `bracket`. */
  phase?: ProbePhase;
  /** What it failed first (a `fail`); the boundary's `infeasible_min.first_breach` is its load's latest. */
  first_breach?: Breach | null;
}

/** Why the search made a probe. */
export type ProbePhase = 'bracket' | 'narrow' | 'confirm';

/** Why the search stopped (AIPerf's `convergence_reason`, with our values). */
export type ConvergenceReason =
  | 'precision_reached'
  | 'max_probes'
  | 'client_limited'
  | 'all_fail'
  | 'none_in_range';

/** The boundary's shape (the values). */
export type BoundaryType = 'point' | 'cliff' | 'none-in-range' | 'all-fail';

/** The search's answer: AIPerf's `boundary_summary` fields, plus the fit. */
export interface BoundarySummary {
  /** The swept option as `profile_export_aiperf.json` names it: `request_rate`, `concurrency`, `synthesis_speedup_ratio`. */
  swept_dim_path: string;
  /** null while the search runs. */
  boundary_type: BoundaryType | null;
  /** The largest load that passed (pooled over its trials); null when none did. */
  feasible_max: { value: number; iteration_idx: number } | null;
  /** The smallest load above it that failed, and what it failed first; null when none did. */
  infeasible_min: { value: number; iteration_idx: number; first_breach: Breach | null } | null;
  /** The SLO whose margin is tightest at the boundary (`<metric_tag>:<stat>`, or `server_verdict`). */
  binding_constraint: string | null;
  /**
   * Where the monotone fit of the binding margin crosses zero between the two, or null (a cliff,
   * or no bracket). A smooth estimate for reading, not a measured pass.
   */
  fitted_boundary: number | null;
  /** `(infeasible_min − feasible_max) / feasible_max`, the resolution reached; null without both. */
  relative_gap: number | null;
  /**
   * Both ends are sure: every SLO's 95 % interval at `feasible_max` lies on the passing side, and at
   * `infeasible_min` the breach's interval lies on the failing side (or the server was overloaded).
   * False when the probe budget ended first; null without both ends.
   */
  confirmed: boolean | null;
  /**
   * Some SLO's margin was higher at a probed load than at a lower one by more than both their
   * 95 % intervals allow, and by 5 % of its threshold or more (a cold cache, a warm-up, a server that
   * batches better under load): the
   * monotone fit pooled them, and the answer assumes load only hurts.
   */
  non_monotonic: boolean;
}

/** What the planner is told about the search. */
export interface PlannerConfig {
  /** `--search-range`: the loads probed lie in [lo, hi]. */
  lo: number;
  hi: number;
  /** `--search-precision`: stop when (fail − pass) / pass is at most this. */
  precision: number;
  /** `--search-max-probes`: judged probes in all, trials and re-probes included (an interrupted one is not counted). */
  maxProbes: number;
  /** `--num-profile-runs`: trials of each new load. */
  trials: number;
  /** Loads are whole numbers (concurrency). */
  integer: boolean;
  swept_dim_path: string;
}

/** The planner's answer: probe this load next, or stop. */
export type PlanStep =
  | { kind: 'probe'; load: number; phase: ProbePhase }
  | { kind: 'done'; reason: ConvergenceReason; boundary: BoundarySummary };
