/**
 * Reading the summary sections that judge a run (`server_verdict`, `steady_state`,
 * `tails_with_failures`) and the time-slice file back, defensively: a section that is absent or
 * does not have its required fields reads as null, so a report of an older run simply leaves it out.
 */
import type {
  LittlesLaw,
  ServerVerdict,
  SlicePoint,
  SteadyState,
  TailPercentiles,
  TailsWithFailures,
  WindowMetric,
} from './analysis-types.js';
import { isObject, numberOrNull, stringOrNull, stringsOf } from './json-read.js';

const VERDICT_STATUSES: readonly ServerVerdict['status'][] = ['ok', 'overloaded', 'unstable', 'unknown'];

function isVerdictStatus(value: unknown): value is ServerVerdict['status'] {
  return VERDICT_STATUSES.includes(value as ServerVerdict['status']);
}

/** The `server_verdict` section; null without a known `status`. */
export function serverVerdictOf(value: unknown): ServerVerdict | null {
  if (!isObject(value) || !isVerdictStatus(value.status)) return null;
  return {
    status: value.status,
    reason: stringOrNull(value.reason) ?? '',
    queue_growth_per_s: numberOrNull(value.queue_growth_per_s),
    since_s: numberOrNull(value.since_s),
    onset_request_rate_per_s: numberOrNull(value.onset_request_rate_per_s),
    evidence: stringsOf(value.evidence),
  };
}

function isWindowMetric(value: unknown): value is WindowMetric {
  return isObject(value) && typeof value.unit === 'string' && typeof value.avg === 'number';
}

/** The metric entries (`{unit, avg, …}`) of an object, by tag. */
export function windowMetricsOf(value: unknown): Record<string, WindowMetric> {
  const out: Record<string, WindowMetric> = {};
  if (!isObject(value)) return out;
  for (const [tag, m] of Object.entries(value)) if (isWindowMetric(m)) out[tag] = m;
  return out;
}

function littlesLawOf(value: unknown): LittlesLaw | null {
  if (!isObject(value)) return null;
  const [l, x, w, gap] = [
    value.mean_in_flight,
    value.throughput_per_s,
    value.mean_latency_s,
    value.relative_gap,
  ].map(numberOrNull);
  if (l === null || l === undefined || x === null || x === undefined) return null;
  if (w === null || w === undefined || gap === null || gap === undefined) return null;
  return {
    mean_in_flight: l,
    throughput_per_s: x,
    mean_latency_s: w,
    relative_gap: gap,
    warning: stringOrNull(value.warning),
  };
}

/** The `steady_state` section; null without numeric window bounds. */
export function steadyStateOf(value: unknown): SteadyState | null {
  if (!isObject(value)) return null;
  const start = numberOrNull(value.start_ns);
  const end = numberOrNull(value.end_ns);
  if (start === null || end === null) return null;
  return {
    start_ns: start,
    end_ns: end,
    method: stringOrNull(value.method) ?? '',
    fraction_of_run: numberOrNull(value.fraction_of_run) ?? Number.NaN,
    requests: numberOrNull(value.requests) ?? Number.NaN,
    fallback_reason: stringOrNull(value.fallback_reason),
    metrics: windowMetricsOf(value.metrics),
    littles_law: littlesLawOf(value.littles_law),
  };
}

const TAIL_KEYS = ['p50', 'p90', 'p95', 'p99'] as const;

function tailOf(value: unknown): TailPercentiles | null {
  if (!isObject(value)) return null;
  const out: TailPercentiles = { unit: stringOrNull(value.unit) ?? '' };
  for (const k of TAIL_KEYS) if (k in value) out[k] = numberOrNull(value[k]);
  return out;
}

/** The `tails_with_failures` section; null without its request count. */
export function tailsOf(value: unknown): TailsWithFailures | null {
  if (!isObject(value)) return null;
  const requests = numberOrNull(value.requests);
  if (requests === null) return null;
  return {
    requests,
    failed: numberOrNull(value.failed) ?? 0,
    cancelled: numberOrNull(value.cancelled) ?? 0,
    censored: numberOrNull(value.censored) ?? 0,
    time_to_first_token: tailOf(value.time_to_first_token),
    request_latency: tailOf(value.request_latency),
  };
}

/**
 * The slices of a parsed `profile_export_aiperf_timeslices.json`, in time order, on the report's
 * time axis (s since `t0Ns`); slices without numeric `start_ns`/`end_ns` are dropped.
 */
export function slicesOf(doc: unknown, t0Ns: bigint): SlicePoint[] {
  if (!isObject(doc) || !Array.isArray(doc.timeslices)) return [];
  const t0 = Number(t0Ns);
  const out: SlicePoint[] = [];
  for (const s of doc.timeslices) {
    if (!isObject(s)) continue;
    const start = numberOrNull(s.start_ns);
    const end = numberOrNull(s.end_ns);
    if (start === null || end === null) continue;
    out.push({ startS: (start - t0) / 1e9, endS: (end - t0) / 1e9, metrics: windowMetricsOf(s) });
  }
  return out.sort((a, b) => a.startS - b.startS);
}
