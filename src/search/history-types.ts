/**
 * The shape of `search_history.json`, the file a search writes into its folder at its start, after
 * every probe and at its end. Field names follow AIPerf's `search_history.json` (its
 * docs/api/search-history.md) where AIPerf has the field; the rest are tokenload's.
 */
import type {
  BoundarySummary,
  Breach,
  ConvergenceReason,
  Interval,
  ProbePhase,
  ProbeStatus,
  Sla,
} from './types.js';

/** The history file's name in the search folder. */
export const SEARCH_HISTORY_FILE_NAME = 'search_history.json';

/** The search as the history records it (what `--resume` checks a command against). */
export interface HistoryConfig {
  /** `--search-over`. */
  search_over: string;
  /** `request_rate`, `concurrency` or `synthesis_speedup_ratio`. */
  swept_dim_path: string;
  range: { lo: number; hi: number };
  /** `int` for concurrency, else `real` (AIPerf's search-space kinds). */
  kind: 'int' | 'real';
  precision: number;
  max_probes: number;
  /** `--num-profile-runs`: trials of each new load. */
  trials: number;
  sla_filters: Sla[];
  slo_attainment_fraction: number | null;
  /** The seed every probe uses (`--random-seed`, else 42). */
  random_seed: number;
  /**
   * SHA-256 of every probe's `profile` options (model, server, dataset, duration, …; not the folder,
   * the seed or the UI): a `--resume` with other options is refused. Absent in older histories.
   */
  profile_sha256?: string;
}

/** One SLO of one probe: the SLO and what was observed (`margin` relative to the threshold). */
export interface HistorySla {
  metric_tag: string;
  stat: string;
  op: string;
  threshold: number;
  observed: number | null;
  interval: Interval | null;
  margin: number | null;
  margin_interval: { low: number | null; high: number | null } | null;
  passed: boolean;
}

/** One probe: a full profile run at one load, in `folder`. */
export interface HistoryIteration {
  /** 0-based, dense. */
  iteration_idx: number;
  /** `probe-01`, … (1-based, two digits or more). */
  folder: string;
  /** `{ <swept_dim_path>: load }`, AIPerf's shape. */
  variation_values: Record<string, number>;
  load: number;
  /** 1-based among the probes of this load. */
  trial: number;
  phase: ProbePhase;
  status: ProbeStatus;
  /** true for pass, false for fail, null when not judged (client-limited, interrupted). */
  feasible: boolean | null;
  slas: HistorySla[];
  /** `--slo-attainment-fraction`: the good fraction of the requests (failed ones not good). */
  attainment: { fraction: number | null; required: number; passed: boolean } | null;
  first_breach: Breach | null;
  client_health: { status: string; verdict: string };
  /** Why a `late` client was (or was not) taken as limiting the probe. */
  client_note: string | null;
  server_verdict: { status: string; reason: string } | null;
  /** The request rate the client sent (the summary's pacing, else its request throughput). */
  delivered_request_rate_per_s: number | null;
  /** Successful requests. */
  request_count: number;
  error_count: number;
  /** ISO 8601. */
  started_at: string;
  duration_s: number;
}

/** Why the search stopped on a probe the client could not deliver. */
export interface ClientLimit {
  iteration_idx: number;
  status: string;
  delivered_request_rate_per_s: number | null;
  requested_load: number;
  /** With a saturated client: `--workers N` that may deliver the load; else null. */
  suggested_workers: number | null;
  message: string;
}

/** The whole `search_history.json`. */
export interface SearchHistory {
  schema_version: '1.0';
  tokenload_version: string;
  /** The command line that started the search, secrets redacted. */
  command: string;
  /** The command lines that resumed it, in order (absent until one did). */
  resumed_by?: string[];
  config: HistoryConfig;
  iterations: HistoryIteration[];
  boundary_summary: BoundarySummary;
  /** null while the search runs (or after an interrupt). */
  convergence_reason: ConvergenceReason | null;
  client_limit: ClientLimit | null;
}
