/**
 * A probe judged from its `profile_export_aiperf.json`: each SLO met or not, the attainment, the
 * client and server verdicts, and the probe's status (types.ts {@link ProbeStatus}):
 *
 * - `client_limited`: the client verdict `saturated`; or `late` with a send-lag p99 above a tenth of
 *   the smallest latency SLO threshold and above a tenth of the mean gap between sends (a late client
 *   whose lateness is small beside what the SLOs allow, or beside the spacing of its requests, still
 *   delivered the load: a 15 ms pause does not stop a search whose SLO is 500 ms, nor one at 1 req/s);
 * - `fail`: an SLO missed, the attainment missed, the server verdict `overloaded`, or no success;
 * - `pass`: otherwise. (`interrupted` is the runner's: Ctrl-C stopped the probe.)
 */
import type { HistoryIteration, HistorySla } from './history-types.js';
import { countOf, observeSla } from './sla-observe.js';
import type { Breach, ProbeStatus, Sla } from './types.js';

/** What a probe's status rests on, beside its SLOs. */
export interface JudgeInput {
  /** The parsed `profile_export_aiperf.json`. */
  summary: Record<string, unknown>;
  slas: readonly Sla[];
  /** `--slo-attainment-fraction`, or null. */
  attainmentFraction: number | null;
}

/** The judged part of a probe's history entry. */
export type Judgement = Pick<
  HistoryIteration,
  | 'status'
  | 'feasible'
  | 'slas'
  | 'attainment'
  | 'first_breach'
  | 'client_health'
  | 'client_note'
  | 'server_verdict'
  | 'delivered_request_rate_per_s'
  | 'request_count'
  | 'error_count'
>;

/**
 * A late client limits the probe when its send-lag p99 is above this share of both the smallest SLO
 * threshold in ms and the mean gap between its sends.
 */
export const LATE_SHARE = 0.1;

/** Latencies between a request's tokens: a late send does not move them, so they are not weighed against its lag. */
const BETWEEN_TOKENS = new Set(['inter_token_latency', 'inter_chunk_latency']);

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (v !== null && typeof v === 'object' ? (v as Obj) : {});
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The request rate the client sent: the rate schedule's achieved rate, else the request throughput. */
export function deliveredRate(summary: Obj): number | null {
  return num(obj(summary.pacing).achieved_request_rate) ?? num(obj(summary.request_throughput).avg);
}

/**
 * Whether the client limited the probe, with the note the history keeps for a `late` client. A late
 * client still delivered the load when its send-lag p99 is at most a tenth of the smallest latency
 * SLO threshold (TTFT, request latency, …: not the latencies between tokens, which a late send does
 * not move), or at most a tenth of the mean gap between its sends (too small to bunch requests up).
 * With neither to weigh it against, a late client limits the probe.
 */
function clientLimit(
  summary: Obj,
  slas: readonly Sla[],
  unitOf: (tag: string) => string,
): { limited: boolean; note: string | null } {
  const health = obj(summary.client_health);
  if (health.status === 'saturated') return { limited: true, note: null };
  if (health.status !== 'late') return { limited: false, note: null };
  const lagP99 = num(obj(health.send_lag_ms).p99);
  const msThresholds = slas
    .filter((s) => unitOf(s.metric_tag) === 'ms' && !BETWEEN_TOKENS.has(s.metric_tag))
    .map((s) => s.threshold);
  const sloBound = msThresholds.length === 0 ? 0 : LATE_SHARE * Math.min(...msThresholds);
  const rate = deliveredRate(summary);
  const gapBound = rate === null || rate <= 0 ? 0 : (LATE_SHARE * 1000) / rate;
  const bound = Math.max(sloBound, gapBound);
  if (lagP99 === null || bound === 0)
    return {
      limited: true,
      note: 'client late, with no send lag, latency SLO or request rate to weigh its lateness against: taken as client-limited',
    };
  const limited = lagP99 > bound;
  const which =
    gapBound > sloBound
      ? `a tenth of the mean gap between sends, ${(1000 / (rate as number)).toFixed(1)} ms`
      : 'a tenth of the smallest latency SLO threshold';
  return {
    limited,
    note: `client late: send lag p99 ${lagP99.toFixed(1)} ms ${limited ? '>' : '≤'} ${bound.toFixed(1)} ms (${which}), so ${limited ? 'the load was not delivered: client-limited' : 'the load was delivered: judged'}`,
  };
}

function breachOf(sla: Sla, observed: number | null): Breach {
  return { metric_tag: sla.metric_tag, stat: sla.stat, op: sla.op, threshold: sla.threshold, observed };
}

/** The attainment check: the summary's `good_request_fraction` (goodput with the per-request SLOs). */
function attainmentOf(summary: Obj, required: number | null): Judgement['attainment'] {
  if (required === null) return null;
  const fraction = num(obj(summary.good_request_fraction).avg);
  return { fraction, required, passed: fraction !== null && fraction >= required };
}

/** The first rule the probe broke, in order: the SLOs, the attainment, the server verdict, no success. */
function firstBreach(
  input: JudgeInput,
  slas: HistorySla[],
  j: Omit<Judgement, 'status' | 'feasible' | 'first_breach' | 'client_note'>,
): Breach | null {
  const failed = input.slas.find((_, i) => slas[i]?.passed === false);
  if (failed !== undefined) return breachOf(failed, slas[input.slas.indexOf(failed)]?.observed ?? null);
  if (j.attainment !== null && !j.attainment.passed)
    return {
      metric_tag: 'goodput',
      stat: 'fraction',
      op: 'ge',
      threshold: j.attainment.required,
      observed: j.attainment.fraction,
    };
  if (j.server_verdict?.status === 'overloaded')
    return {
      metric_tag: 'server_verdict',
      stat: 'status',
      op: 'eq',
      threshold: 'not overloaded',
      observed: 'overloaded',
    };
  if (j.request_count === 0)
    return { metric_tag: 'request_count', stat: 'avg', op: 'gt', threshold: 0, observed: 0 };
  return null;
}

/**
 * Judges the probe of `input.summary`. `unitOf` gives a metric tag's unit (`ms` for latencies).
 */
export function judgeProbe(input: JudgeInput, unitOf: (tag: string) => string): Judgement {
  const { summary } = input;
  const slas: HistorySla[] = input.slas.map((sla) => {
    const o = observeSla(summary, sla);
    const { metric_tag, stat, op, threshold } = sla;
    return {
      metric_tag,
      stat,
      op,
      threshold,
      observed: o.observed,
      interval: o.interval,
      margin: o.margin,
      margin_interval: o.margin_interval,
      passed: o.passed,
    };
  });
  const health = obj(summary.client_health);
  const verdict = obj(summary.server_verdict);
  const base = {
    slas,
    attainment: attainmentOf(summary, input.attainmentFraction),
    client_health: { status: String(health.status ?? 'unknown'), verdict: String(health.verdict ?? '') },
    server_verdict:
      summary.server_verdict === undefined || summary.server_verdict === null
        ? null
        : { status: String(verdict.status), reason: String(verdict.reason ?? '') },
    delivered_request_rate_per_s: deliveredRate(summary),
    request_count: countOf(summary, 'request_count'),
    error_count: countOf(summary, 'error_request_count'),
  };
  const client = clientLimit(summary, input.slas, unitOf);
  const breach = firstBreach(input, slas, base);
  const status: ProbeStatus = client.limited ? 'client_limited' : breach === null ? 'pass' : 'fail';
  return {
    ...base,
    status,
    feasible: status === 'pass' ? true : status === 'fail' ? false : null,
    first_breach: status === 'client_limited' ? null : breach,
    client_note: client.note,
  };
}
