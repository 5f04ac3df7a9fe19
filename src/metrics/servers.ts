/**
 * The `servers` section of a run with several servers (`--url` given more than once): per server,
 * how many requests and sessions it got and its main metrics, computed as the run's own (the same
 * record metrics and run-level formulas, over that server's records and its own benchmark window:
 * its first request start to its last response). Memory per server: the run totals and three lists
 * of numbers (TTFT, request latency, ITL), never the records.
 */
import type { MetricUnit } from '../record/metric-types.js';
import type { LineRecord } from '../record/types.js';
import { CacheCheck, type CacheCheckSummary } from './cache-check.js';
import { ErrorSummaryBuilder, type ErrorSummaryEntry } from './error-summary.js';
import { metricByTag } from './registry.js';
import { tailStats } from './stats.js';
import { StreamIntegrityCheck, type StreamIntegritySummary } from './stream-integrity-check.js';
import { addToTotals, emptyTotals } from './totals.js';
import type { RunMetricDef, RunTotals } from './types.js';

/** The per-record metrics each server reports, with their statistics. */
const SERVER_DISTRIBUTIONS = ['time_to_first_token', 'request_latency', 'inter_token_latency'] as const;

/** The run-level metrics each server reports (their formulas, over the server's own records). */
const SERVER_RATES = ['request_throughput', 'output_token_throughput'] as const;

/** A distribution of one server: unit, mean, median, tail and count (values in the metric's display unit). */
export interface ServerDistribution {
  unit: MetricUnit;
  avg: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  count: number;
}

/** One server's entry of the `servers` section. */
export interface ServerSummary {
  /** The server as `--url` gave it (normalized). */
  url: string;
  /** Successful requests (AIPerf `request_count`). */
  request_count: number;
  /** Failed requests, cancelled ones included (AIPerf `error_request_count`). */
  error_request_count: number;
  /** Sessions whose first turn it answered or failed (every later turn of a session goes to the same server). */
  sessions: number;
  /** Requests/s and output tokens/s over this server's own window; absent without a positive window. */
  request_throughput?: number;
  output_token_throughput?: number;
  time_to_first_token?: ServerDistribution;
  request_latency?: ServerDistribution;
  inter_token_latency?: ServerDistribution;
  /**
   * This server's own cache check (the run's `cache_check` figures over its requests only); absent
   * when none of its requests had an ideal. The prompt-count check learns per server in the run's
   * `usage_check.per_layout` (each layout's `server`).
   */
  cache_check?: CacheCheckSummary;
  /**
   * This server's own stream-integrity counts (the run's `stream_integrity` over its requests only):
   * a gateway that buffers or a replica whose usage contradicts its streams is named by its URL.
   */
  stream_integrity: StreamIntegritySummary;
  /**
   * This server's failures grouped as the run's `error_summary` is (code, type, first message,
   * count), most frequent first; absent when none of its requests failed.
   */
  error_summary?: ErrorSummaryEntry[];
}

/** What is kept of one server while the run goes on. */
interface ServerTally {
  totals: RunTotals;
  sessions: number;
  cache: CacheCheck;
  integrity: StreamIntegrityCheck;
  errors: ErrorSummaryBuilder;
  values: Record<(typeof SERVER_DISTRIBUTIONS)[number], number[]>;
}

function emptyTally(): ServerTally {
  return {
    totals: emptyTotals(false),
    sessions: 0,
    cache: new CacheCheck(),
    integrity: new StreamIntegrityCheck(),
    errors: new ErrorSummaryBuilder(),
    values: { time_to_first_token: [], request_latency: [], inter_token_latency: [] },
  };
}

function distribution(tag: string, values: readonly number[]): ServerDistribution | undefined {
  if (values.length === 0) return undefined;
  let sum = 0;
  for (const v of values) sum += v;
  const unit = (metricByTag(tag)?.unit ?? 'ms') as MetricUnit;
  return { unit, avg: sum / values.length, ...tailStats(values), count: values.length };
}

/** Folds the records of a run with several servers into one tally per server, by `serverUrl`. */
export class ServerSplit {
  private readonly tallies = new Map<string, ServerTally>();

  /** @param urls the run's servers in `--url` order (the section lists them in this order). */
  constructor(urls: readonly string[]) {
    for (const url of urls) this.tallies.set(url, emptyTally());
  }

  /** Folds in one record; a record without a known server is not counted here. */
  add(record: LineRecord): void {
    const url = record.raw.serverUrl;
    const tally = url === undefined ? undefined : this.tallies.get(url);
    if (tally === undefined) return;
    addToTotals(tally.totals, record, null);
    if (record.raw.turnIndex === 0) tally.sessions++;
    tally.cache.add(record);
    tally.integrity.add(record);
    if (!record.valid) {
      if (record.raw.error !== null) tally.errors.add(record.raw.error);
      return;
    }
    for (const tag of SERVER_DISTRIBUTIONS) {
      const value = record.metrics[tag];
      if (typeof value === 'number') tally.values[tag].push(value);
    }
  }

  /** One entry per server, in `--url` order. */
  build(): ServerSummary[] {
    return [...this.tallies].map(([url, tally]) => {
      const out: ServerSummary = {
        url,
        request_count: tally.totals.validCount,
        error_request_count: tally.totals.errorCount,
        sessions: tally.sessions,
        stream_integrity: tally.integrity.result(),
      };
      for (const tag of SERVER_RATES) {
        const value = (metricByTag(tag) as RunMetricDef).compute(tally.totals);
        if (value !== undefined) out[tag] = value;
      }
      for (const tag of SERVER_DISTRIBUTIONS) {
        const d = distribution(tag, tally.values[tag]);
        if (d !== undefined) out[tag] = d;
      }
      const cache = tally.cache.result();
      if (cache !== null) out.cache_check = cache;
      const errors = tally.errors.entries();
      if (errors.length > 0) out.error_summary = errors;
      return out;
    });
  }
}

/**
 * The console line of one server, e.g. `Server http://10.0.0.2:8000: 118 succeeded, 2 failed (Service
 * Unavailable (503) ×2) in 40 sessions; TTFT p50 35.1 ms, request latency p50 812.4 ms`.
 */
export function serverLine(s: ServerSummary): string {
  const parts = [`Server ${s.url}: ${countPart(s)} in ${s.sessions} sessions`];
  const tails: string[] = [];
  if (s.time_to_first_token !== undefined) tails.push(`TTFT p50 ${s.time_to_first_token.p50.toFixed(1)} ms`);
  if (s.request_latency !== undefined)
    tails.push(`request latency p50 ${s.request_latency.p50.toFixed(1)} ms`);
  if (tails.length > 0) parts.push(tails.join(', '));
  const cache = s.cache_check;
  if (cache !== undefined) parts.push(cachedPart(cache));
  const stream = s.stream_integrity === undefined ? null : integrityPart(s.stream_integrity);
  if (stream !== null) parts.push(stream);
  return parts.join('; ');
}

/**
 * `120 requests`, or with failures `118 succeeded, 2 failed (Service Unavailable (503) ×2)`: the
 * commonest failure kinds (at most two, then how many more), so a server whose every request failed
 * says why on its own line.
 */
function countPart(s: ServerSummary): string {
  if (s.error_request_count === 0) return `${s.request_count} requests`;
  const groups = s.error_summary ?? [];
  const named = groups.slice(0, 2).map((g) => `${errorLabel(g)} ×${g.count}`);
  if (groups.length > 2) named.push(`${groups.length - 2} more ${groups.length === 3 ? 'kind' : 'kinds'}`);
  const why = named.length === 0 ? '' : ` (${named.join(', ')})`;
  return `${s.request_count} succeeded, ${s.error_request_count} failed${why}`;
}

/** An error group in a few words: its type, with its code when it has one (`ConnectionError (503)`). */
function errorLabel(g: ErrorSummaryEntry): string {
  return g.code > 0 ? `${g.type} (${g.code})` : g.type;
}

/** `prefix cache: ideal 45.7 %, reported 44.9 % (40 requests)` of one server. */
function cachedPart(c: CacheCheckSummary): string {
  const pct = (r: number | null) => (r === null ? 'N/A' : `${(r * 100).toFixed(1)} %`);
  const reported =
    c.requests_reported === 0
      ? 'no cached_tokens reported'
      : `reported ${pct(c.reported_hit_ratio)} (${c.requests_reported} requests)`;
  return `prefix cache: ideal ${pct(c.ideal_hit_ratio)}, ${reported}`;
}

/**
 * `stream: 12 buffered, 3 usage not used` of one server; null when its streams were all clean (or the
 * entry predates the field).
 */
function integrityPart(i: StreamIntegritySummary): string | null {
  const named: Array<[number, string]> = [
    [i.buffered, 'buffered'],
    [i.cumulative, 'cumulative'],
    [i.usage_untrusted, 'usage not used'],
    [i.malformed_event, 'malformed event'],
    [i.event_too_large, 'event over the size cap'],
  ];
  const parts = named.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  return parts.length === 0 ? null : `stream: ${parts.join(', ')}`;
}
