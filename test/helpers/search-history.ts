/**
 * Writes a search folder as `tokenload search` leaves it: `search_history.json` (the shape of
 * `src/search/types.ts`, snake_case) and one `probe-NN/` folder per probe, some with a
 * `report.html`. The histories are input data for the search report's tests, made up here: a TTFT
 * that grows with the load, an ITL that grows slower.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One probe to write: its load, phase, status and what it observed of each SLO. */
export interface ProbeInput {
  load: number;
  phase: 'bracket' | 'narrow' | 'confirm';
  status: 'pass' | 'fail' | 'client_limited' | 'interrupted';
  trial?: number;
  /** Observed TTFT p95 and ITL p95 (ms); null when the probe has none. */
  ttftMs: number | null;
  itlMs: number;
  overloaded?: boolean;
  /** Writes `probe-NN/report.html` too. */
  withReport?: boolean;
}

/** The search's SLOs in every history written here. */
export const SLAS = [
  { metric_tag: 'time_to_first_token', stat: 'p95', op: 'lt', threshold: 500, source: '--search-sla' },
  { metric_tag: 'inter_token_latency', stat: 'p95', op: 'lt', threshold: 40, source: '--itl-sla-ms' },
] as const;

type Json = Record<string, unknown>;

function slaEntry(sla: (typeof SLAS)[number], observed: number | null): Json {
  return {
    metric_tag: sla.metric_tag,
    stat: sla.stat,
    op: sla.op,
    threshold: sla.threshold,
    observed,
    interval: observed === null ? null : { low: observed * 0.9, high: observed * 1.1 },
    margin: observed === null ? null : (sla.threshold - observed) / sla.threshold,
    margin_interval: null,
    passed: observed !== null && observed < sla.threshold,
  };
}

function iteration(p: ProbeInput, i: number): Json {
  const [ttft, itl] = SLAS;
  const failed = p.status === 'fail';
  return {
    iteration_idx: i,
    folder: probeFolder(i),
    variation_values: { request_rate: p.load },
    load: p.load,
    trial: p.trial ?? 0,
    phase: p.phase,
    status: p.status,
    feasible: p.status === 'pass' ? true : failed ? false : null,
    slas: [slaEntry(ttft, p.ttftMs), slaEntry(itl, p.itlMs)],
    attainment: null,
    first_breach: failed
      ? { metric_tag: 'time_to_first_token', stat: 'p95', op: 'lt', threshold: 500, observed: p.ttftMs }
      : null,
    client_health:
      p.status === 'client_limited'
        ? { status: 'saturated', verdict: 'the client could not keep up' }
        : { status: 'ok', verdict: 'kept up' },
    client_note: null,
    server_verdict: { status: p.overloaded === true ? 'overloaded' : 'ok', reason: 'queue' },
    delivered_request_rate_per_s: p.load,
    request_count: 200,
    error_count: 0,
    started_at: '2025-06-01T10:00:00Z',
    duration_s: 12,
  };
}

/** `probe-01` for the first probe (index 0). */
export function probeFolder(index: number): string {
  return `probe-${String(index + 1).padStart(2, '0')}`;
}

/** What a test may set of a history beside its probes. */
export interface HistoryInput {
  probes: ProbeInput[];
  range?: { lo: number; hi: number };
  boundary?: Json | null;
  convergence_reason?: string | null;
  client_limit?: Json | null;
}

/** The history object of `input` (a test may break it before writing). */
export function searchHistory(input: HistoryInput): Json {
  return {
    schema_version: '1.0',
    tokenload_version: '0.0.0-test',
    command: 'tokenload search --simulator --search-over request-rate (test)',
    config: {
      search_over: 'request-rate',
      swept_dim_path: 'request_rate',
      range: input.range ?? { lo: 1, hi: 100 },
      kind: 'real',
      precision: 0.05,
      max_probes: 12,
      trials: 1,
      sla_filters: SLAS,
      slo_attainment_fraction: null,
      random_seed: 0,
    },
    iterations: input.probes.map(iteration),
    boundary_summary: input.boundary ?? null,
    convergence_reason:
      input.convergence_reason === undefined ? 'precision_reached' : input.convergence_reason,
    client_limit: input.client_limit ?? null,
  };
}

/** Writes `history` and the probe folders into a new temporary folder; returns it. */
export function writeSearchFolder(history: Json, probes: readonly ProbeInput[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-search-report-'));
  probes.forEach((p, i) => {
    mkdirSync(join(dir, probeFolder(i)));
    if (p.withReport === true) writeFileSync(join(dir, probeFolder(i), 'report.html'), '<!doctype html>');
  });
  writeFileSync(join(dir, 'search_history.json'), JSON.stringify(history, null, 1));
  return dir;
}

/** A bracket then narrow search over request rate: passes up to 20/s, fails from 24/s. */
export const BRACKETED: ProbeInput[] = [
  { load: 2, phase: 'bracket', status: 'pass', ttftMs: 80, itlMs: 12, withReport: true },
  { load: 8, phase: 'bracket', status: 'pass', ttftMs: 200, itlMs: 15 },
  { load: 32, phase: 'bracket', status: 'fail', ttftMs: 1400, itlMs: 45, overloaded: true, withReport: true },
  { load: 16, phase: 'narrow', status: 'pass', ttftMs: 320, itlMs: 20 },
  { load: 24, phase: 'narrow', status: 'fail', ttftMs: 640, itlMs: 28 },
  { load: 20, phase: 'narrow', status: 'pass', ttftMs: 430, itlMs: 24 },
  { load: 20, phase: 'confirm', status: 'pass', trial: 1, ttftMs: 460, itlMs: 25 },
];

/** The boundary of {@link BRACKETED}: `type` point or cliff between probe 6 (20/s) and probe 5 (24/s). */
export function bracketedBoundary(type: 'point' | 'cliff', fitted: number | null): Json {
  return {
    swept_dim_path: 'request_rate',
    boundary_type: type,
    feasible_max: { value: 20, iteration_idx: 5 },
    infeasible_min: {
      value: 24,
      iteration_idx: 4,
      first_breach: {
        metric_tag: 'time_to_first_token',
        stat: 'p95',
        op: 'lt',
        threshold: 500,
        observed: 640,
      },
    },
    binding_constraint: 'time_to_first_token:p95',
    fitted_boundary: fitted,
    relative_gap: 0.2,
  };
}
