/**
 * Reads a search folder's `search_history.json` (what `tokenload search` rewrites after every
 * probe; its shapes are those of `src/search/types.ts`, snake_case) and checks it against a zod
 * schema, so the search report draws only what it understands. Fields the report does not draw are
 * optional; unknown fields are ignored.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { RunLoadError } from './types.js';

/** The file a search writes into its folder. */
export const SEARCH_HISTORY_FILE = 'search_history.json';

const num = z.number().refine(Number.isFinite, 'not a finite number');
const numOrNull = num.nullable();

const intervalSchema = z.object({ low: numOrNull, high: numOrNull });

const slaFilterSchema = z.object({
  metric_tag: z.string().min(1),
  stat: z.string().min(1),
  op: z.enum(['lt', 'le', 'gt', 'ge']),
  threshold: num,
  source: z.string().optional(),
});

const slaObservationSchema = z.object({
  /** `<metric_tag>:<stat>`; either it or `metric_tag` + `stat` pairs the entry with its SLO. */
  key: z.string().optional(),
  metric_tag: z.string().optional(),
  stat: z.string().optional(),
  op: z.string().optional(),
  threshold: num.optional(),
  observed: numOrNull,
  interval: intervalSchema.nullable().optional(),
  margin: numOrNull.optional(),
  margin_interval: intervalSchema.nullable().optional(),
  passed: z.boolean(),
});

const breachSchema = z.object({
  metric_tag: z.string(),
  stat: z.string(),
  op: z.string(),
  threshold: z.union([num, z.string()]),
  observed: z.union([num, z.string()]).nullable(),
});

const iterationSchema = z.object({
  iteration_idx: z.number().int().nonnegative(),
  folder: z.string().min(1),
  load: num,
  trial: z.number().int().nonnegative().optional(),
  phase: z.enum(['bracket', 'narrow', 'confirm']),
  status: z.enum(['pass', 'fail', 'client_limited', 'interrupted']),
  feasible: z.boolean().nullable().optional(),
  slas: z.array(slaObservationSchema),
  attainment: z.object({ fraction: numOrNull, required: num, passed: z.boolean() }).nullable().optional(),
  first_breach: breachSchema.nullable().optional(),
  client_health: z
    .object({ status: z.string(), verdict: z.string().nullable().optional() })
    .nullable()
    .optional(),
  client_note: z.string().nullable().optional(),
  server_verdict: z
    .object({ status: z.string(), reason: z.string().nullable().optional() })
    .nullable()
    .optional(),
  delivered_request_rate_per_s: numOrNull.optional(),
  request_count: z.number().int().nonnegative().nullable().optional(),
  error_count: z.number().int().nonnegative().nullable().optional(),
  started_at: z.string().nullable().optional(),
  duration_s: numOrNull.optional(),
});

const boundarySchema = z.object({
  swept_dim_path: z.string().optional(),
  boundary_type: z.enum(['point', 'cliff', 'none-in-range', 'all-fail']).nullable(),
  feasible_max: z.object({ value: num, iteration_idx: z.number().int() }).nullable(),
  infeasible_min: z
    .object({ value: num, iteration_idx: z.number().int(), first_breach: breachSchema.nullable().optional() })
    .nullable(),
  binding_constraint: z.string().nullable().optional(),
  fitted_boundary: numOrNull.optional(),
  relative_gap: numOrNull.optional(),
  /** Both ends sure (their intervals clear the SLOs); false when the budget ended first. */
  confirmed: z.boolean().nullable().optional(),
  /** A margin rose with load beyond the intervals between two neighbouring loads. */
  non_monotonic: z.boolean().optional(),
});

const clientLimitSchema = z.object({
  iteration_idx: z.number().int().nullable().optional(),
  status: z.string().nullable().optional(),
  delivered_request_rate_per_s: numOrNull.optional(),
  requested_load: numOrNull.optional(),
  suggested_workers: z.number().int().nullable().optional(),
  message: z.string(),
});

const historySchema = z.object({
  schema_version: z.string(),
  tokenload_version: z.string().optional(),
  command: z.string().optional(),
  config: z.object({
    search_over: z.enum(['request-rate', 'concurrency', 'speedup']),
    swept_dim_path: z.string().optional(),
    range: z.object({ lo: num, hi: num }),
    kind: z.enum(['int', 'real']).optional(),
    precision: num.optional(),
    max_probes: z.number().int().positive().optional(),
    trials: z.number().int().positive().optional(),
    sla_filters: z.array(slaFilterSchema).min(1),
    slo_attainment_fraction: numOrNull.optional(),
    random_seed: z.number().nullable().optional(),
  }),
  iterations: z.array(iterationSchema),
  boundary_summary: boundarySchema.nullable().optional(),
  convergence_reason: z
    .enum(['precision_reached', 'max_probes', 'client_limited', 'all_fail', 'none_in_range'])
    .nullable(),
  client_limit: clientLimitSchema.nullable().optional(),
});

/** A `search_history.json` as the report reads it. */
export type SearchHistory = z.infer<typeof historySchema>;
/** One probe of a {@link SearchHistory}. */
export type SearchIteration = SearchHistory['iterations'][number];
/** One SLO of the search (`config.sla_filters`). */
export type SearchSla = SearchHistory['config']['sla_filters'][number];
/** One SLO as one probe met it. */
export type SearchSlaObservation = SearchIteration['slas'][number];
/** The search's answer; null fields while it runs. */
export type SearchBoundary = NonNullable<SearchHistory['boundary_summary']>;
/** What the probe that breached first breached. */
export type SearchBreach = z.infer<typeof breachSchema>;
/** Why the client stopped the search. */
export type SearchClientLimit = NonNullable<SearchHistory['client_limit']>;

/** `iterations[3].slas[0].observed` from a zod issue path. */
function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  return out === '' ? '(top level)' : out;
}

/**
 * Checks parsed JSON against the history's schema.
 * @param file - the file's path, named in the error.
 * @throws {RunLoadError} (E_ARTIFACTS) naming the file and the first bad field.
 */
export function parseSearchHistory(value: unknown, file: string): SearchHistory {
  const parsed = historySchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue === undefined ? '(top level)' : fieldPath(issue.path);
  const why = issue?.message ?? 'does not match the search history schema';
  throw new RunLoadError(`${file}: field ${where}: ${why}`, file);
}

/**
 * Reads and checks `<dir>/search_history.json`.
 * @throws {RunLoadError} (E_ARTIFACTS) when the file is missing, is not JSON, or a field is bad (the message names the file and field).
 */
export async function readSearchHistory(dir: string): Promise<SearchHistory> {
  const file = join(dir, SEARCH_HISTORY_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new RunLoadError(`${file}: cannot be read (${(err as Error).message})`, file);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new RunLoadError(`${file}: not JSON (${(err as Error).message})`, file);
  }
  return parseSearchHistory(json, file);
}

/**
 * The observation of `sla` (the `index`-th SLO of the search) in one probe: the entry whose key or
 * `metric_tag` + `stat` names it, else the entry at the same position; undefined when none.
 */
export function observationOf(
  it: SearchIteration,
  sla: SearchSla,
  index: number,
): SearchSlaObservation | undefined {
  const key = `${sla.metric_tag}:${sla.stat}`;
  const names = (o: SearchSlaObservation): boolean | null => {
    if (o.key !== undefined) return o.key === key;
    if (o.metric_tag === undefined) return null;
    return o.metric_tag === sla.metric_tag && o.stat === sla.stat && (o.op === undefined || o.op === sla.op);
  };
  const at = it.slas[index];
  // Same position first (two SLOs may share a metric and stat), unless it names another SLO.
  if (at !== undefined && names(at) !== false) return at;
  return it.slas.find((o) => names(o) === true);
}
