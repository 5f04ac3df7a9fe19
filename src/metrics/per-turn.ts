/**
 * The `per_turn` section of a multi-turn run: the run's records grouped by `turn_index` (0-based,
 * as the records carry it), turn indexes of {@link PER_TURN_CAP} and above in one last bucket, each
 * with its request count and the statistics of TTFT, ITL, request latency, ISL and the server's
 * reported cached prompt tokens, and its prefix-cache hit fraction. The first turn of a session
 * pays its prefill; later turns resend the conversation so far and should hit the prefix cache.
 *
 * Cached tokens are `usage.prompt_tokens_details.cached_tokens` as the server sent it: a request
 * whose usage had no `cached_tokens` (or no `prompt_tokens`) is counted as unknown, never as 0
 * (as the run's `cache_check`, ./cache-check.ts). Memory: the metric values per bucket in
 * {@link ValueStore}s (spilling to disk with a merge's budget), never the records.
 */
import type { MetricUnit } from '../record/metric-types.js';
import type { LineRecord } from '../record/types.js';
import { type PercentileInterval, percentileConfidenceOfView } from './percentile-ci.js';
import { metricByTag } from './registry.js';
import type { ServerDistribution } from './servers.js';
import { statsOfView } from './stats.js';
import { type SpillBudget, ValueStore } from './value-store.js';

/** Turn indexes at or above this one share one bucket (labelled `10+`): a 200-turn session gives 11 entries. */
export const PER_TURN_CAP = 10;

/** The per-record metrics each bucket reports, by tag. */
export const PER_TURN_METRICS = [
  'time_to_first_token',
  'inter_token_latency',
  'request_latency',
  'input_sequence_length',
  'usage_cached_tokens',
] as const;

/** One of {@link PER_TURN_METRICS}. */
export type PerTurnMetric = (typeof PER_TURN_METRICS)[number];

/**
 * A distribution of one bucket, in the metric's display unit (ms, tokens): mean, median, tail, max,
 * count, and the 95 % interval of p50, p90 and p99 (./percentile-ci.ts) over its successful requests
 * (for `usage_cached_tokens`, over those counted in {@link TurnCache.requests_reported}).
 */
export interface TurnDistribution extends ServerDistribution {
  ci95: { p50: PercentileInterval; p90: PercentileInterval; p99: PercentileInterval };
}

/** The prefix-cache figures of one bucket, over its successful requests. */
export interface TurnCache {
  /** Successful requests whose usage had both `cached_tokens` and `prompt_tokens`. */
  requests_reported: number;
  /** Successful requests whose usage lacked either: unknown, not 0. */
  requests_unknown: number;
  /** Σ reported `cached_tokens` of the reporting requests. */
  cached_tokens: number;
  /** Σ server `prompt_tokens` of the reporting requests. */
  prompt_tokens: number;
  /** cached_tokens / prompt_tokens; null when no request reported (or 0 prompt tokens). */
  hit_ratio: number | null;
}

/** One entry of `per_turn.turns`. */
export type TurnEntry = {
  /** The bucket's turn index (0-based); for the last bucket, {@link PER_TURN_CAP} (its first). */
  turn_index: number;
  /** `"0"`, `"1"`, …, and `"10+"` for the capped bucket. */
  label: string;
  /** The capped bucket only: the highest turn index it holds. */
  turn_index_max?: number;
  /** Records of the bucket, failed ones included. */
  requests: number;
  /** Of them, failed (cancelled included). */
  errors: number;
  cache: TurnCache;
} & Partial<Record<PerTurnMetric, TurnDistribution>>;

/** `per_turn` section of the summary. */
export interface PerTurnSection {
  /** {@link PER_TURN_CAP}: turn indexes from it on are one bucket. */
  bucket_cap: number;
  /** One entry per bucket that has records, by turn index. */
  turns: TurnEntry[];
}

/** What is kept of one bucket while the run goes on. */
interface TurnTally {
  requests: number;
  errors: number;
  maxTurnIndex: number;
  cache: TurnCache;
  values: Map<PerTurnMetric, ValueStore>;
}

function ratio(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

function distributionOf(tag: PerTurnMetric, store: ValueStore): TurnDistribution {
  const unit = (metricByTag(tag)?.unit ?? 'ms') as MetricUnit;
  return store.describe((view) => {
    const s = statsOfView(view);
    const { ci95 } = percentileConfidenceOfView(view);
    const none = { low: null, high: null };
    return {
      unit,
      avg: s.avg,
      p50: s.p50,
      p90: s.p90,
      p99: s.p99,
      max: s.max,
      count: s.count,
      ci95: { p50: ci95.p50 ?? none, p90: ci95.p90 ?? none, p99: ci95.p99 ?? none },
    };
  });
}

/** Folds a run's records into one tally per turn-index bucket. */
export class PerTurnSplit {
  private readonly tallies = new Map<number, TurnTally>();
  private multiTurn = false;

  /** @param spill - where the values spill past a bound (a merge's budget); null: all in memory. */
  constructor(private readonly spill: SpillBudget | null = null) {}

  /** Folds in one record. */
  add(record: LineRecord): void {
    const turn = record.raw.turnIndex;
    if (turn > 0) this.multiTurn = true;
    const bucket = Math.min(turn, PER_TURN_CAP);
    const tally = this.tallyOf(bucket);
    tally.requests++;
    tally.maxTurnIndex = Math.max(tally.maxTurnIndex, turn);
    if (!record.valid) {
      tally.errors++;
      return;
    }
    for (const tag of PER_TURN_METRICS) {
      const value = record.metrics[tag];
      if (typeof value === 'number' && tag !== 'usage_cached_tokens') this.storeOf(tally, tag).push(value);
    }
    const cached = record.metrics.usage_cached_tokens;
    const prompt = record.raw.usage?.prompt_tokens;
    if (typeof cached !== 'number' || prompt === undefined) {
      tally.cache.requests_unknown++;
      return;
    }
    tally.cache.requests_reported++;
    this.storeOf(tally, 'usage_cached_tokens').push(cached);
    tally.cache.cached_tokens += cached;
    tally.cache.prompt_tokens += prompt;
  }

  private tallyOf(bucket: number): TurnTally {
    let tally = this.tallies.get(bucket);
    if (tally === undefined) {
      tally = {
        requests: 0,
        errors: 0,
        maxTurnIndex: bucket,
        cache: {
          requests_reported: 0,
          requests_unknown: 0,
          cached_tokens: 0,
          prompt_tokens: 0,
          hit_ratio: null,
        },
        values: new Map(),
      };
      this.tallies.set(bucket, tally);
    }
    return tally;
  }

  private storeOf(tally: TurnTally, tag: PerTurnMetric): ValueStore {
    let store = tally.values.get(tag);
    if (store === undefined) {
      store = new ValueStore(this.spill);
      tally.values.set(tag, store);
    }
    return store;
  }

  /** The section; null when no record had a turn index above 0 (a single-turn run has none). */
  build(): PerTurnSection | null {
    if (!this.multiTurn) return null;
    const buckets = [...this.tallies.keys()].sort((a, b) => a - b);
    const turns = buckets.map((bucket) => {
      const t = this.tallies.get(bucket) as TurnTally;
      const capped = bucket === PER_TURN_CAP;
      const entry: TurnEntry = {
        turn_index: bucket,
        label: capped ? `${PER_TURN_CAP}+` : String(bucket),
        ...(capped ? { turn_index_max: t.maxTurnIndex } : {}),
        requests: t.requests,
        errors: t.errors,
        cache: { ...t.cache, hit_ratio: ratio(t.cache.cached_tokens, t.cache.prompt_tokens) },
      };
      for (const tag of PER_TURN_METRICS) {
        const store = t.values.get(tag);
        if (store !== undefined && store.length > 0) entry[tag] = distributionOf(tag, store);
      }
      return entry;
    });
    return { bucket_cap: PER_TURN_CAP, turns };
  }

  /** Drops every value and closes their spill files. */
  release(): void {
    for (const t of this.tallies.values()) for (const store of t.values.values()) store.release();
  }
}

function pct(r: number | null): string {
  return r === null ? 'N/A' : `${(r * 100).toFixed(1)} %`;
}

/** Buckets shown in the console line before it elides the middle ones. */
const CONSOLE_BUCKETS = 4;

/**
 * The console line of a multi-turn run, e.g. `By turn: TTFT p50 turn 0 41.2 ms, 1 12.0 ms, 2 11.3
 * ms; cached tokens 0.0 % at turn 0 → 78.4 % at later turns (reported by 14 of 14 later requests)`;
 * request latency stands for TTFT in a run that does not stream; more than four buckets show the
 * first three and the last. Null when fewer than two buckets have that metric.
 */
export function perTurnLine(section: PerTurnSection): string | null {
  const streamed = section.turns.some((t) => t.time_to_first_token !== undefined);
  const tag: PerTurnMetric = streamed ? 'time_to_first_token' : 'request_latency';
  const withData = section.turns.filter((t) => t[tag] !== undefined);
  if (withData.length < 2) return null;
  const shown =
    withData.length <= CONSOLE_BUCKETS
      ? withData
      : [...withData.slice(0, CONSOLE_BUCKETS - 1), null, withData[withData.length - 1] as TurnEntry];
  const figures = shown.map((t) =>
    t === null ? '…' : `${t.label} ${(t[tag] as TurnDistribution).p50.toFixed(1)} ms`,
  );
  const name = streamed ? 'TTFT' : 'request latency';
  return `By turn: ${name} p50 turn ${figures.join(', ')}; ${cachePart(section.turns)}`;
}

/** `cached tokens 0.0 % at turn 0 → 78.4 % at later turns (reported by 14 of 14 later requests)`. */
function cachePart(turns: readonly TurnEntry[]): string {
  const first = turns.find((t) => t.turn_index === 0)?.cache;
  let cached = 0;
  let prompt = 0;
  let reported = 0;
  let known = 0;
  for (const t of turns) {
    if (t.turn_index === 0) continue;
    cached += t.cache.cached_tokens;
    prompt += t.cache.prompt_tokens;
    reported += t.cache.requests_reported;
    known += t.cache.requests_reported + t.cache.requests_unknown;
  }
  if (reported === 0 && (first?.requests_reported ?? 0) === 0)
    return 'cached tokens not reported by the server (unknown, not 0)';
  const from = first === undefined ? 'N/A' : pct(first.hit_ratio);
  return `cached tokens ${from} at turn 0 → ${pct(ratio(cached, prompt))} at later turns (reported by ${reported} of ${known} later requests)`;
}
