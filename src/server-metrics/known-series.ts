/**
 * The server series tokenload follows by name, whatever the engine calls them: each has vLLM's
 * names (vLLM docs, "Production Metrics"; older names after newer ones) and SGLang's (SGLang docs,
 * "Production Metrics", served with `--enable-metrics`); the built-in simulator serves vLLM's.
 * Counter names are given without `_total` (the parser drops it from counter families; an untyped
 * `…_total` family is found too). A family with several label sets (vLLM's `engine`, SGLang's
 * `tp_rank` or `cache_source`) is summed, except a usage ratio, which is averaged; a counter is
 * summed by its increases, each label set's own ({@link counterTotals}), never by its values.
 */
import { labelKey } from './prometheus-text.js';
import type { ScrapeLine, SnapshotMetrics } from './snapshot.js';
import { increase } from './window.js';

/** How a followed series is summarized over the window. */
export type SeriesKind = 'gauge' | 'counter';

/** One followed series. */
export interface KnownSeries {
  /** tokenload's name of the series (the `server_metrics` key). */
  key: string;
  kind: SeriesKind;
  /** Unit of the value (a counter's unit; its rate is per second). */
  unit: 'requests' | 'ratio' | 'tokens';
  /** How label sets combine: summed, or averaged (a ratio per engine). */
  combine: 'sum' | 'mean';
  /** Family names, first found wins. */
  names: readonly string[];
  /** Shown in the report and in docs/server-metrics.md. */
  label: string;
}

/** Every followed series, in display order. */
export const KNOWN_SERIES: readonly KnownSeries[] = [
  {
    key: 'running_requests',
    kind: 'gauge',
    unit: 'requests',
    combine: 'sum',
    names: ['vllm:num_requests_running', 'sglang:num_running_reqs'],
    label: 'requests running',
  },
  {
    key: 'waiting_requests',
    kind: 'gauge',
    unit: 'requests',
    combine: 'sum',
    names: ['vllm:num_requests_waiting', 'sglang:num_queue_reqs'],
    label: 'requests waiting',
  },
  {
    key: 'kv_cache_usage',
    kind: 'gauge',
    unit: 'ratio',
    combine: 'mean',
    names: ['vllm:kv_cache_usage_perc', 'vllm:gpu_cache_usage_perc', 'sglang:token_usage'],
    label: 'KV-cache usage',
  },
  {
    key: 'server_cache_hit_rate',
    kind: 'gauge',
    unit: 'ratio',
    combine: 'mean',
    names: ['sglang:cache_hit_rate'],
    label: "prefix-cache hit rate (the server's own gauge)",
  },
  {
    key: 'prefix_cache_hits',
    kind: 'counter',
    unit: 'tokens',
    combine: 'sum',
    names: ['vllm:prefix_cache_hits', 'vllm:gpu_prefix_cache_hits', 'sglang:cached_tokens'],
    label: 'prefix-cache hits',
  },
  {
    key: 'prefix_cache_queries',
    kind: 'counter',
    unit: 'tokens',
    combine: 'sum',
    names: ['vllm:prefix_cache_queries', 'vllm:gpu_prefix_cache_queries'],
    label: 'prefix-cache queries',
  },
  {
    key: 'preemptions',
    kind: 'counter',
    unit: 'requests',
    combine: 'sum',
    names: ['vllm:num_preemptions', 'sglang:num_retracted_requests'],
    label: 'preemptions',
  },
  {
    key: 'prompt_tokens',
    kind: 'counter',
    unit: 'tokens',
    combine: 'sum',
    names: ['vllm:prompt_tokens', 'sglang:prompt_tokens'],
    label: 'prompt tokens',
  },
  {
    key: 'generation_tokens',
    kind: 'counter',
    unit: 'tokens',
    combine: 'sum',
    names: ['vllm:generation_tokens', 'sglang:generation_tokens'],
    label: 'generation tokens',
  },
];

/** A followed series' value in one scrape, and the family it came from. */
export interface KnownValue {
  value: number;
  source: string;
}

/** The family `name` in a scrape: as named, or its `_total` form (an untyped counter). */
function familyOf(metrics: SnapshotMetrics, name: string): { name: string; values: number[] } | null {
  for (const candidate of [name, `${name}_total`]) {
    const series = metrics[candidate];
    if (series === undefined) continue;
    const values: number[] = [];
    for (const s of series) if (typeof s.value === 'number') values.push(s.value);
    if (values.length > 0) return { name: candidate, values };
  }
  return null;
}

/** The value of `series` in one scrape's `metrics`; null when none of its families is there. */
export function knownValue(series: KnownSeries, metrics: SnapshotMetrics): KnownValue | null {
  for (const name of series.names) {
    const family = familyOf(metrics, name);
    if (family === null) continue;
    const sum = family.values.reduce((a, b) => a + b, 0);
    return { value: series.combine === 'sum' ? sum : sum / family.values.length, source: family.name };
  }
  return null;
}

/** `vllm` or `sglang` by the prefix of the families a scrape carries; null for another server. */
export function serverKind(metrics: SnapshotMetrics): 'vllm' | 'sglang' | null {
  const names = Object.keys(metrics);
  if (names.some((n) => n.startsWith('vllm:'))) return 'vllm';
  if (names.some((n) => n.startsWith('sglang:'))) return 'sglang';
  return null;
}

/** A followed counter per scrape: its increase since the first scrape, and the resets seen so far. */
export interface CounterTotals {
  /** The family the counter was read from (the first of `series.names` the scrapes hold). */
  source: string;
  /** Per scrape line: the summed increase of every label set since the first line; null without it. */
  totals: Array<number | null>;
  /** Per scrape line: how many label sets went down (a restart) up to it. */
  resets: number[];
}

/** The first of `series.names` (or its `_total` form) that any scrape holds a number for. */
function counterSource(series: KnownSeries, lines: readonly ScrapeLine[]): string | null {
  for (const name of series.names)
    for (const candidate of [name, `${name}_total`])
      if (lines.some((l) => l.metrics[candidate]?.some((s) => typeof s.value === 'number'))) return candidate;
  return null;
}

/**
 * A counter's running total over time-ordered scrapes, summed over its label sets by their own
 * increases: a label set missing from a scrape keeps its last value (it adds nothing, it is no reset),
 * a label set that went down restarted (its new value is its increase), and one that appears after
 * the first scrape counts from 0. Summing values instead would read a label set that disappears as
 * a reset of the whole counter.
 * @returns null when no scrape holds the counter.
 */
export function counterTotals(series: KnownSeries, lines: readonly ScrapeLine[]): CounterTotals | null {
  const source = counterSource(series, lines);
  if (source === null) return null;
  const last = new Map<string, number>();
  const totals: Array<number | null> = [];
  const resets: number[] = [];
  let total = 0;
  let resetCount = 0;
  let seen = false;
  for (const line of lines) {
    const own = (line.metrics[source] ?? []).filter((s) => typeof s.value === 'number');
    for (const s of own) {
      const key = labelKey(s.labels ?? {});
      const value = s.value as number;
      const prev = last.get(key) ?? (seen ? 0 : value);
      if (value < prev) resetCount++;
      total += increase(prev, value);
      last.set(key, value);
    }
    if (own.length > 0) seen = true;
    totals.push(own.length > 0 ? total : null);
    resets.push(resetCount);
  }
  return { source, totals, resets };
}
