/**
 * Run summary: statistics of every per-record metric, the aggregate and derived metrics, the error
 * summary and warnings. Exporters are pure functions of a {@link Summary}.
 */
import type { MetricUnit } from '../record/metric-types.js';
import { RECORD_METRICS } from '../record/record-metrics.js';
import type { LineRecord } from '../record/types.js';
import { CacheCheck, type CacheCheckSummary, cacheWarnings } from './cache-check.js';
import { ErrorSummaryBuilder, type ErrorSummaryEntry } from './error-summary.js';
import type { Slo } from './goodput.js';
import { type PercentileConfidence, percentileConfidenceOfView } from './percentile-ci.js';
import { type MetricTag, RUN_METRICS } from './registry.js';
import { ResponseChecks, type ResponsesSection } from './response-checks.js';
import { type Stats, statsOfView } from './stats.js';
import {
  StreamIntegrityCheck,
  type StreamIntegritySummary,
  streamIntegrityWarnings,
} from './stream-integrity-check.js';
import { TailsBuilder, type TailsSummary } from './tails.js';
import { addToTotals, emptyTotals } from './totals.js';
import type { RunTotals } from './types.js';
import { type OverheadOf, UsageCheck, type UsageCheckSummary, usageWarnings } from './usage-check.js';
import { type SpillBudget, ValueStore } from './value-store.js';
import { runWarnings } from './warnings.js';

/**
 * Statistics of a per-record metric, in its display unit: AIPerf's, then p99.9 and the 95 % interval
 * of each percentile (./percentile-ci.ts; `ci95` absent only in a summary built by hand).
 */
export type StatsSummary = { unit: MetricUnit } & Stats & Partial<PercentileConfidence>;

/** Value of an aggregate or derived metric (AIPerf exports only `unit` and `avg` for these). */
export interface ScalarSummary {
  unit: MetricUnit;
  avg: number;
}

/** Either kind of summarized metric. */
export type MetricSummary = StatsSummary | ScalarSummary;

/** Whether `m` holds a distribution (per-record metric) rather than a single value. */
export function isStatsSummary(m: MetricSummary): m is StatsSummary {
  return 'count' in m;
}

/** The summary of a run. */
export interface Summary {
  /** Metrics that have a value, keyed by tag; absent metrics are omitted, never 0-filled. */
  metrics: Partial<Record<MetricTag, MetricSummary>>;
  /** Failures grouped by (code, type), most frequent first. */
  errorSummary: ErrorSummaryEntry[];
  /** Human warnings (OSL mismatch, usage discrepancy, a warm prefix cache). */
  warnings: string[];
  /** The sums the run-level metrics came from. */
  totals: RunTotals;
  /** Server prompt counts against the client's after the learned chat template; null when none compared. */
  usageCheck: UsageCheckSummary | null;
  /** Ideal against reported prefix-cache hits; null when no request had an ideal. */
  cacheCheck: CacheCheckSummary | null;
  /** What the successful answers were like: not streamed, without usage, where counts came from. */
  responses: ResponsesSection;
  /**
   * Streams and usages that were not what they seemed (buffered, cumulative, usage not used,
   * unreadable events); absent from a summary not built from records.
   */
  streamIntegrity?: StreamIntegritySummary;
  /**
   * TTFT and latency percentiles counting failures and censored requests (`tails_with_failures`);
   * null without records, absent from a summary not built from records.
   */
  tails?: TailsSummary | null;
}

/** Options of {@link summarize}. */
export interface SummarizeOptions {
  /** Goodput SLOs from `parseGoodput`; without them goodput metrics are omitted. */
  slos?: readonly Slo[];
  /**
   * Where the metric values spill to disk past a bound (value-store.ts): a merge's, so its memory
   * stays bounded; absent: every value stays in memory (a run's).
   */
  spill?: SpillBudget;
  /** What the usage check's learned overhead is made of (the endpoint's); default `chat_template`. */
  overheadOf?: OverheadOf;
}

/**
 * The window records were observed in (ns on their clock, start < end), e.g. one time slice: the
 * rates and `benchmark_duration` then use its length instead of the records' own span (AIPerf
 * divides a time slice's throughput by the slice's window).
 */
export interface ObservationWindow {
  startNs: number;
  endNs: number;
}

function collectValues(
  values: Map<string, ValueStore>,
  record: LineRecord,
  budget: SpillBudget | null,
): void {
  const metrics = record.metrics;
  // for…in, not Object.entries: no array of pairs per record (this runs once per response).
  for (const tag in metrics) {
    const value = metrics[tag] as number | number[];
    let store = values.get(tag);
    if (store === undefined) {
      store = new ValueStore(budget);
      values.set(tag, store);
    }
    if (typeof value === 'number') store.push(value);
    else for (let i = 0; i < value.length; i++) store.push(value[i] as number);
  }
}

function recordSummaries(values: Map<string, ValueStore>): Partial<Record<MetricTag, MetricSummary>> {
  const out: Partial<Record<MetricTag, MetricSummary>> = {};
  for (const def of RECORD_METRICS) {
    const store = values.get(def.tag);
    // In memory: one sorted copy of one metric at a time; spilled: a merge of its sorted runs.
    if (store === undefined || store.length === 0) continue;
    out[def.tag as MetricTag] = store.describe((view) => ({
      unit: def.unit,
      ...statsOfView(view),
      ...percentileConfidenceOfView(view),
    }));
  }
  return out;
}

function runSummaries(
  totals: RunTotals,
  windowNs: ObservationWindow | undefined,
): Partial<Record<MetricTag, MetricSummary>> {
  const out: Partial<Record<MetricTag, MetricSummary>> = {};
  // The rates read the window from minStartNs/maxResponseNs; a given window replaces the records' span.
  const t =
    windowNs === undefined
      ? totals
      : { ...totals, minStartNs: windowNs.startNs, maxResponseNs: windowNs.endNs };
  for (const def of RUN_METRICS) {
    const avg = def.compute(t);
    if (avg !== undefined) out[def.tag as MetricTag] = { unit: def.unit, avg };
  }
  return out;
}

/**
 * Incremental form of {@link summarize}: records are folded in as they complete, so a run keeps only
 * the metric values (numbers) and the sums, never the records themselves. `build()` may be called
 * more than once; it does not consume the builder.
 */
export class SummaryBuilder {
  private readonly slos: readonly Slo[] | null;
  private readonly totals: RunTotals;
  /** Every value of every per-record metric (list metrics flattened), for exact statistics. */
  private readonly values = new Map<string, ValueStore>();
  private readonly errors = new ErrorSummaryBuilder();
  private readonly usage: UsageCheck;
  private readonly cache = new CacheCheck();
  private readonly checks = new ResponseChecks();
  private readonly integrity = new StreamIntegrityCheck();
  private readonly tails = new TailsBuilder();
  /** Records added. */
  count = 0;

  /** Successful records added so far. */
  get validCount(): number {
    return this.totals.validCount;
  }
  /** Earliest request start of every record added, failed ones included (monotonic ns); null before any. */
  firstStartNs: number | null = null;

  /** The options it was built with, for summaries of the same records' parts (time slices). */
  readonly options: SummarizeOptions;

  constructor(opts: SummarizeOptions = {}) {
    this.options = opts;
    this.slos = opts.slos !== undefined && opts.slos.length > 0 ? opts.slos : null;
    this.totals = emptyTotals(this.slos !== null);
    this.usage = new UsageCheck(opts.overheadOf);
  }

  /** Folds in one record. */
  add(record: LineRecord): void {
    this.count++;
    if (this.firstStartNs === null || record.raw.startNs < this.firstStartNs)
      this.firstStartNs = record.raw.startNs;
    addToTotals(this.totals, record, this.slos);
    collectValues(this.values, record, this.options.spill ?? null);
    this.usage.add(record);
    this.cache.add(record);
    this.checks.add(record);
    this.integrity.add(record);
    this.tails.add(record);
    if (!record.valid && record.raw.error !== null) this.errors.add(record.raw.error);
  }

  /**
   * A copy of the values of one per-record metric collected so far (e.g. `schedule_lag`, ms), in
   * the order added; empty when none.
   * @throws {RangeError} when they spilled to disk (a {@link SummarizeOptions.spill} budget).
   */
  valuesOf(tag: MetricTag): readonly number[] {
    return this.values.get(tag)?.toArray() ?? [];
  }

  /** Drops every metric value and closes their spill files; `build()` then summarizes no values. */
  release(): void {
    for (const store of this.values.values()) store.release();
    this.values.clear();
  }

  /**
   * The summary of the records added so far.
   * @param windowNs - the window they were observed in (a time slice); absent: their own span.
   */
  build(windowNs?: ObservationWindow): Summary {
    const usageCheck = this.usage.result();
    const cacheCheck = this.cache.result();
    const streamIntegrity = this.integrity.result();
    // The discrepancy count needs the overheads learned over the whole run.
    this.totals.usageDiscrepancyCount = usageCheck?.discrepant ?? 0;
    return {
      metrics: { ...recordSummaries(this.values), ...runSummaries(this.totals, windowNs) },
      errorSummary: this.errors.entries(),
      warnings: [
        ...runWarnings(this.totals),
        ...usageWarnings(usageCheck),
        ...cacheWarnings(cacheCheck),
        ...streamIntegrityWarnings(streamIntegrity, this.integrity.sources()),
      ],
      totals: this.totals,
      usageCheck,
      cacheCheck,
      responses: this.checks.section(),
      streamIntegrity,
      tails: this.tails.build(),
    };
  }
}

/**
 * Summarizes processed records in one pass. Per-record metrics get exact statistics over all their
 * values (list metrics such as inter_chunk_latency are flattened); run-level metrics follow
 * `metrics/defs/counts.ts` and `metrics/defs/throughput.ts`.
 */
export function summarize(records: Iterable<LineRecord>, opts: SummarizeOptions = {}): Summary {
  const builder = new SummaryBuilder(opts);
  for (const record of records) builder.add(record);
  return builder.build();
}
