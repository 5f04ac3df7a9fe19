/**
 * The cache check: the server's reported prefix-cache hits (`usage.prompt_tokens_details.cached_tokens`)
 * beside what an ideal prefix cache would hold from this run's earlier requests
 * (`ideal_cached_tokens`, dataset/prefix-chain.ts). A server cannot hit blocks it was never sent, so a
 * request reporting more than its ideal plus a slack means a cache warmed before the run, typically
 * by an earlier run with the same `--random-seed` (the same hash ids give the same prompt text).
 *
 * Slack of a request = its chat template overhead (server − client prompt tokens, when positive: the
 * template's own tokens are cached too) + max({@link CACHE_SLACK_MIN_TOKENS} tokens,
 * {@link CACHE_SLACK_PCT} % of its prompt). The run warns when at least
 * {@link CACHE_WARN_MIN_REQUESTS} requests, and at least {@link CACHE_WARN_SHARE_PCT} % of those
 * compared, are over it.
 */
import type { LineRecord } from '../record/types.js';

/** Slack of the over-report rule: at least this many tokens… */
export const CACHE_SLACK_MIN_TOKENS = 16;
/** …or this % of the prompt, whichever is more (plus the template overhead). */
export const CACHE_SLACK_PCT = 5;
/** The warning needs at least this many over-reporting requests… */
export const CACHE_WARN_MIN_REQUESTS = 2;
/** …and at least this % of the requests compared. */
export const CACHE_WARN_SHARE_PCT = 5;

/** `cache_check` of the summary. Token counts are sums over successful requests. */
export interface CacheCheckSummary {
  /** Requests with `ideal_cached_tokens` (synthesized prompts sent without history). */
  requests_with_ideal: number;
  /** Σ `ideal_cached_tokens` of those. */
  ideal_cached_tokens: number;
  /** Σ client prompt tokens of those. */
  ideal_prompt_tokens: number;
  /** ideal_cached_tokens / ideal_prompt_tokens; null when 0 prompt tokens. */
  ideal_hit_ratio: number | null;
  /** Of those, requests whose server reported `cached_tokens` and `prompt_tokens`. */
  requests_reported: number;
  /** Σ reported `cached_tokens` of those. */
  reported_cached_tokens: number;
  /** Σ server `prompt_tokens` of those. */
  reported_prompt_tokens: number;
  /** reported_cached_tokens / reported_prompt_tokens; null when 0 prompt tokens. */
  reported_hit_ratio: number | null;
  /** Σ `ideal_cached_tokens` of the reporting requests (to read beside reported_cached_tokens). */
  ideal_cached_tokens_of_reported: number;
  /**
   * Reporting requests with reported > ideal + slack; null when not judged (`tokenload merge` could
   * not compute the ideal over all shards, merge/merged-ideal.ts: a shard's own ideals would take
   * another shard's blocks for a warm cache).
   */
  over_reported: number | null;
}

function ratio(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

function metric(record: LineRecord, tag: string): number | undefined {
  const v = record.metrics[tag];
  return typeof v === 'number' ? v : undefined;
}

/** Sums the cache figures of successful requests as they complete. */
export class CacheCheck {
  private readonly s: CacheCheckSummary & { over_reported: number } = {
    requests_with_ideal: 0,
    ideal_cached_tokens: 0,
    ideal_prompt_tokens: 0,
    ideal_hit_ratio: null,
    requests_reported: 0,
    reported_cached_tokens: 0,
    reported_prompt_tokens: 0,
    reported_hit_ratio: null,
    ideal_cached_tokens_of_reported: 0,
    over_reported: 0,
  };

  /** Folds in one record (successful ones with `ideal_cached_tokens`; others are skipped). */
  add(record: LineRecord): void {
    const ideal = metric(record, 'ideal_cached_tokens');
    const client = record.raw.inputTokens;
    if (!record.valid || ideal === undefined || client === null) return;
    const s = this.s;
    s.requests_with_ideal++;
    s.ideal_cached_tokens += ideal;
    s.ideal_prompt_tokens += client;
    const reported = metric(record, 'usage_cached_tokens');
    const serverPrompt = record.raw.usage?.prompt_tokens;
    if (reported === undefined || serverPrompt === undefined) return;
    s.requests_reported++;
    s.reported_cached_tokens += reported;
    s.reported_prompt_tokens += serverPrompt;
    s.ideal_cached_tokens_of_reported += ideal;
    const slack =
      Math.max(0, serverPrompt - client) + Math.max(CACHE_SLACK_MIN_TOKENS, (CACHE_SLACK_PCT / 100) * client);
    if (reported > ideal + slack) s.over_reported++;
  }

  /** The figures so far; null when no request had an ideal. */
  result(): CacheCheckSummary | null {
    const s = this.s;
    if (s.requests_with_ideal === 0) return null;
    return {
      ...s,
      ideal_hit_ratio: ratio(s.ideal_cached_tokens, s.ideal_prompt_tokens),
      reported_hit_ratio: ratio(s.reported_cached_tokens, s.reported_prompt_tokens),
    };
  }
}

/** The warm-cache warning, or none. */
export function cacheWarnings(c: CacheCheckSummary | null): string[] {
  if (c === null) return [];
  const n = c.over_reported;
  if (n === null || n < CACHE_WARN_MIN_REQUESTS || n < (CACHE_WARN_SHARE_PCT / 100) * c.requests_reported)
    return [];
  return [
    `${n} of ${c.requests_reported} requests report more cached prompt tokens than an ideal prefix cache ` +
      `holds from this run's earlier requests (reported ${c.reported_cached_tokens} vs ideal ` +
      `${c.ideal_cached_tokens_of_reported} tokens in all); the server's prefix cache was probably left ` +
      'warm by an earlier run with the same --random-seed (equal hash ids give equal prompt text; the runs ' +
      'of --num-profile-runs share one seed unless --no-set-consistent-seed). Restart the server or reset ' +
      'its prefix cache, or change --random-seed, to measure from a cold cache.',
  ];
}

function pct(r: number | null): string {
  return r === null ? 'N/A' : `${(r * 100).toFixed(1)} %`;
}

/**
 * The console line, e.g. `Prefix cache: ideal 45.7 % of prompt tokens (blocks sent earlier in this
 * run, 40 requests), server reported 44.9 % (2 of 4 requests reported cached tokens; unknown, not 0,
 * for the other 2); 0 over the ideal`: the reported ratio is over the requests that reported
 * `cached_tokens` only (a `prompt_tokens_details` that is null or has no `cached_tokens` is no
 * report, never a 0). Null without ideals.
 */
export function cacheCheckLine(c: CacheCheckSummary | null): string | null {
  if (c === null) return null;
  const ideal = `ideal ${pct(c.ideal_hit_ratio)} of prompt tokens (blocks sent earlier in this run, ${c.requests_with_ideal} requests)`;
  const n = c.requests_with_ideal;
  const unknown = n - c.requests_reported;
  const others = unknown > 0 && c.requests_reported > 0 ? `; unknown, not 0, for the other ${unknown}` : '';
  const reported =
    c.requests_reported === 0
      ? `the server reported no cached_tokens (0 of ${n} requests: unknown, not 0)`
      : `server reported ${pct(c.reported_hit_ratio)} (${c.requests_reported} of ${n} requests reported cached tokens${others}); ${c.over_reported === null ? 'not judged against the ideal (see the warning)' : `${c.over_reported} over the ideal`}`;
  return `Prefix cache: ${ideal}, ${reported}`;
}
