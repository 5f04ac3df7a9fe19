/**
 * Tails that count failures: TTFT and request-latency percentiles over every request, where a failed
 * or cancelled request counts as slower than any success (+∞), and a request the run ended while in
 * flight (duration cut-off, Ctrl-C) is right-censored at its elapsed time. The estimator is the
 * Kaplan–Meier product-limit estimator (E. L. Kaplan and P. Meier, "Nonparametric estimation from
 * incomplete observations", J. Amer. Statist. Assoc. 53 (1958) 457–481): successes are events,
 * censored requests leave the risk set at their elapsed time, failures stay in it forever.
 */
import type { LineRecord } from '../record/types.js';
import { ValueStore } from './value-store.js';

/** The percentiles of the section, as fractions, ascending. */
const QUANTILES = [0.5, 0.9, 0.95, 0.99] as const;

/** Slack when comparing an estimated CDF with a quantile: the product of (1 − d/n) rounds. */
const CDF_SLACK = 1e-9;

/**
 * One metric's percentiles counting failures, ms. A percentile is null when the estimated CDF never
 * reaches it: it lies beyond every success, among the failures (or past the last success when
 * censored requests hold the rest).
 */
export interface TailPercentiles {
  unit: 'ms';
  p50: number | null;
  p90: number | null;
  p95: number | null;
  p99: number | null;
}

/** The summary section `tails_with_failures` (profile_export_aiperf.json), keys as written. */
export interface TailsWithFailures {
  /** Every request of the run (successes, failures, censored). */
  requests: number;
  /** Failed requests, client cancellations included; censored ones not. */
  failed: number;
  /** Of `failed`, those the client cancelled (`--request-cancellation-rate`). */
  cancelled: number;
  /** Requests the run ended while in flight: right-censored at their elapsed time. */
  censored: number;
  method: 'kaplan_meier';
  /** Null when no request of the run had a TTFT (a run without `--streaming`). */
  time_to_first_token: TailPercentiles | null;
  /** Null when no request counted (never: every request has a latency, a failure or a censoring). */
  request_latency: TailPercentiles | null;
  note: string;
}

/** The section, and whether counting failures and censoring moved any percentile. */
export interface TailsSummary {
  section: TailsWithFailures;
  /**
   * True when a percentile differs from the same estimator over the successes alone (their
   * nearest-rank percentile): the failures or the censored requests changed it.
   */
  shifted: boolean;
}

const NOTE =
  'Percentiles over every request: a failed or cancelled request counts as slower than any success; ' +
  'a request the run ended in flight (duration cut-off, Ctrl-C) is censored at its elapsed time ' +
  '(Kaplan-Meier product-limit estimate). A percentile is the smallest value whose estimated CDF ' +
  'reaches it; null when it lies beyond every success. A request that failed after its first token ' +
  'keeps its TTFT; its latency counts as a failure.';

/**
 * Kaplan–Meier quantiles: for each of ascending `quantiles` (fractions), the smallest event value
 * where the estimated CDF 1 − Ŝ(t) reaches it; null when it never does. Ŝ(t) = Π over event values
 * tᵢ ≤ t of (1 − dᵢ/nᵢ): dᵢ events at tᵢ, nᵢ at risk just before tᵢ (events and censored values
 * ≥ tᵢ, plus the `infinite` ones, which never leave). A censored value equal to an event value is
 * still at risk at it. Without censored or infinite values this is the nearest-rank percentile.
 * @param events ascending finite values (successes).
 * @param censored ascending finite values (censored observations).
 * @param infinite how many values are +∞ (failures).
 */
export function productLimitQuantiles(
  events: Float64Array,
  censored: Float64Array,
  infinite: number,
  quantiles: readonly number[],
): Array<number | null> {
  const out: Array<number | null> = quantiles.map(() => null);
  let atRisk = events.length + censored.length + infinite;
  let survival = 1;
  let c = 0;
  let next = 0;
  let i = 0;
  while (i < events.length && next < quantiles.length) {
    const t = events[i] as number;
    while (c < censored.length && (censored[c] as number) < t) {
      c++;
      atRisk--;
    }
    let deaths = 0;
    while (i < events.length && events[i] === t) {
      deaths++;
      i++;
    }
    survival *= 1 - deaths / atRisk;
    atRisk -= deaths;
    while (next < quantiles.length && 1 - survival >= (quantiles[next] as number) - CDF_SLACK)
      out[next++] = t;
  }
  return out;
}

/** The values one metric's tail is estimated from. */
class TailValues {
  readonly events = new ValueStore();
  readonly censored = new ValueStore();
  infinite = 0;

  /** Its section entry, and whether it differs from the successes' own; null when nothing counted. */
  result(): { percentiles: TailPercentiles; shifted: boolean } | null {
    if (this.events.length === 0 && this.censored.length === 0 && this.infinite === 0) return null;
    const events = this.events.sorted();
    const all = productLimitQuantiles(events, this.censored.sorted(), this.infinite, QUANTILES);
    const alone = productLimitQuantiles(events, new Float64Array(0), 0, QUANTILES);
    const [p50 = null, p90 = null, p95 = null, p99 = null] = all;
    return { percentiles: { unit: 'ms', p50, p90, p95, p99 }, shifted: all.some((v, k) => v !== alone[k]) };
  }
}

/** A finite number, or undefined (a metric a record lacks, or a NaN read back from a file). */
function finite(value: number | number[] | undefined): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Folds records into {@link TailsSummary}, keeping numbers only: per record at most one TTFT and one
 * latency value (an event or a censoring time), and counts of failures.
 */
export class TailsBuilder {
  private readonly ttft = new TailValues();
  private readonly latency = new TailValues();
  private requests = 0;
  private failed = 0;
  private cancelled = 0;
  private censored = 0;

  /** Folds in one record. */
  add(record: LineRecord): void {
    this.requests++;
    const { raw, metrics } = record;
    if (record.valid) {
      const ttft = finite(metrics.time_to_first_token);
      // A success without a TTFT (no streaming, or an answer in one body) is left out of the TTFT tail.
      if (ttft !== undefined) this.ttft.events.push(ttft);
      const latency = finite(metrics.request_latency);
      if (latency !== undefined) this.latency.events.push(latency);
      return;
    }
    const elapsedMs = (raw.endNs - raw.startNs) / 1e6;
    const firstTokenMs = finite(metrics.error_time_to_first_token);
    if (raw.censored === true) {
      this.censored++;
      this.latency.censored.push(elapsedMs);
      if (firstTokenMs === undefined) this.ttft.censored.push(elapsedMs);
      else this.ttft.events.push(firstTokenMs);
      return;
    }
    this.failed++;
    if (raw.cancelled || raw.error?.kind === 'cancelled') this.cancelled++;
    this.latency.infinite++;
    if (firstTokenMs === undefined) this.ttft.infinite++;
    else this.ttft.events.push(firstTokenMs);
  }

  /** The summary of the records added so far; null before any. */
  build(): TailsSummary | null {
    if (this.requests === 0) return null;
    // TTFT exists only when some request had one: a failure alone says nothing of a run's streaming.
    const ttft = this.ttft.events.length > 0 ? this.ttft.result() : null;
    const latency = this.latency.result();
    return {
      section: {
        requests: this.requests,
        failed: this.failed,
        cancelled: this.cancelled,
        censored: this.censored,
        method: 'kaplan_meier',
        time_to_first_token: ttft?.percentiles ?? null,
        request_latency: latency?.percentiles ?? null,
        note: NOTE,
      },
      shifted: ttft?.shifted === true || latency?.shifted === true,
    };
  }
}
