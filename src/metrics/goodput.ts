/**
 * Goodput SLOs (AIPerf `--goodput "tag:value tag:value"`; metric reference, "Goodput"). Thresholds
 * are in the metric's display unit (ms for latencies), compared against record metric values.
 */

import { TokenloadError } from '../errors.js';
import type { RecordMetrics } from '../record/types.js';
import { numberRule, plainNumber } from '../util/plain-number.js';
import { closestName } from '../util/suggest.js';
import { METRICS, metricByTag } from './registry.js';
import type { MetricDef } from './types.js';

/** One service-level objective on a per-record metric. */
export interface Slo {
  tag: string;
  /** Threshold in the metric's display unit. */
  threshold: number;
  /** Met with `value >= threshold` when true, `value <= threshold` otherwise. */
  largerIsBetter: boolean;
}

/** A malformed `--goodput` string; the message names the offending item. */
export class GoodputParseError extends TokenloadError {
  override readonly name = 'GoodputParseError';
  constructor(message: string) {
    super('E_CONFIG', message);
  }
}

/** Whether `def` is a scalar per-request metric an SLO can judge. */
function judgeable(def: MetricDef | undefined): def is MetricDef {
  return (
    def !== undefined &&
    def.kind === 'record' &&
    def.flags.errorOnly !== true &&
    def.tag !== 'inter_chunk_latency'
  );
}

/** The tags `--goodput` takes, in registry order. */
export function goodputTags(): string[] {
  return Object.values(METRICS)
    .filter((d: MetricDef) => judgeable(d))
    .map((d: MetricDef) => d.tag);
}

function parseItem(item: string): Slo {
  const colon = item.lastIndexOf(':');
  const tag = item.slice(0, colon).trim();
  const threshold = plainNumber(item.slice(colon + 1), false);
  if (colon <= 0 || threshold === undefined || !Number.isFinite(threshold) || threshold < 0) {
    throw new GoodputParseError(
      `--goodput item "${item}": expected tag:value with a value >= 0, ${numberRule(false)}`,
    );
  }
  const def = metricByTag(tag);
  if (!judgeable(def)) {
    const tags = goodputTags();
    const guess = def === undefined ? closestName(tag, tags) : null;
    const what = def === undefined ? 'is not a metric' : 'is not a per-request metric';
    const hint = guess === null ? '' : ` (Did you mean ${guess}?)`;
    throw new GoodputParseError(
      `--goodput item "${item}": "${tag}" ${what}${hint}; a goodput SLO takes one of: ${tags.join(', ')}`,
    );
  }
  return { tag, threshold, largerIsBetter: def.flags.largerIsBetter === true };
}

/**
 * Parses `"time_to_first_token:300 inter_token_latency:20"` (space- or comma-separated `tag:value`).
 * @throws {GoodputParseError} for an empty spec, a non-numeric value, or a tag that is not a scalar
 * per-request metric.
 */
export function parseGoodput(spec: string): Slo[] {
  const items = spec.split(/[\s,]+/).filter((s) => s !== '');
  if (items.length === 0) throw new GoodputParseError('--goodput: no SLOs given');
  return items.map(parseItem);
}

/** A run's SLOs split by whether the run measures their metric. */
export interface ApplicableSlos {
  /** The SLOs goodput is judged on. */
  kept: Slo[];
  /** SLOs on a metric only streamed responses have (TTFT, ITL, …), in a run that does not stream. */
  dropped: Slo[];
}

/**
 * Splits `slos` by whether the run measures their metric. AIPerf's `--goodput` reference: "Only
 * metrics applicable to the current endpoint/config are considered", so an SLO on a streamed-only
 * metric in a run that does not stream is left out of goodput (not failed by every request); the
 * run warns about it ({@link droppedSlosWarning}).
 * @param streamed the run's responses are streamed (`--streaming` on an endpoint that streams).
 */
export function applicableSlos(slos: readonly Slo[], streamed: boolean): ApplicableSlos {
  const streamedOnly = (slo: Slo) => metricByTag(slo.tag)?.flags.streamingOnly === true;
  if (streamed) return { kept: [...slos], dropped: [] };
  return { kept: slos.filter((s) => !streamedOnly(s)), dropped: slos.filter(streamedOnly) };
}

/** The warning about SLOs {@link applicableSlos} left out, or null when none was. */
export function droppedSlosWarning(dropped: readonly Slo[], keptCount: number): string | null {
  if (dropped.length === 0) return null;
  const tags = dropped.map((s) => s.tag).join(', ');
  const rest =
    keptCount === 0 ? 'no SLO is left, so no goodput is reported' : 'goodput is judged on the other SLOs';
  return `--goodput ${tags}: measured on streamed responses only, and this run does not stream, so the SLO is left out (as AIPerf does: only metrics the run measures count); ${rest}; add --streaming to count it`;
}

/**
 * The SLOs a run judges goodput on, as the summary builder takes them: `{ slos }` with the
 * applicable ones of `spec`, or `{}` (no goodput) without `--goodput` or with none applicable.
 * @throws {GoodputParseError} for a bad `spec`.
 */
export function runSlos(spec: string | undefined, streamed: boolean): { slos?: Slo[] } {
  if (spec === undefined) return {};
  const { kept } = applicableSlos(parseGoodput(spec), streamed);
  return kept.length === 0 ? {} : { slos: kept };
}

/** Whether a record meets every SLO. A missing (or list) value fails its SLO. */
export function meetsSlos(metrics: RecordMetrics, slos: readonly Slo[]): boolean {
  return slos.every((slo) => {
    const value = metrics[slo.tag];
    if (typeof value !== 'number') return false;
    return slo.largerIsBetter ? value >= slo.threshold : value <= slo.threshold;
  });
}
