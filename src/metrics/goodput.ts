/**
 * Goodput SLOs (AIPerf `--goodput "tag:value tag:value"`; metric reference, "Goodput"). Thresholds
 * are in the metric's display unit (ms for latencies), compared against record metric values.
 */

import { TokenloadError } from '../errors.js';
import type { RecordMetrics } from '../record/types.js';
import { metricByTag } from './registry.js';

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

function parseItem(item: string): Slo {
  const colon = item.lastIndexOf(':');
  const tag = item.slice(0, colon).trim();
  const threshold = Number(item.slice(colon + 1));
  if (colon <= 0 || item.slice(colon + 1).trim() === '' || !Number.isFinite(threshold) || threshold < 0) {
    throw new GoodputParseError(`--goodput item "${item}": expected tag:value with a numeric value`);
  }
  const def = metricByTag(tag);
  if (
    def === undefined ||
    def.kind !== 'record' ||
    def.flags.errorOnly === true ||
    tag === 'inter_chunk_latency'
  ) {
    throw new GoodputParseError(`--goodput item "${item}": "${tag}" is not a per-request metric`);
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

/** Whether a record meets every SLO. A missing (or list) value fails its SLO. */
export function meetsSlos(metrics: RecordMetrics, slos: readonly Slo[]): boolean {
  return slos.every((slo) => {
    const value = metrics[slo.tag];
    if (typeof value !== 'number') return false;
    return slo.largerIsBetter ? value >= slo.threshold : value <= slo.threshold;
  });
}
