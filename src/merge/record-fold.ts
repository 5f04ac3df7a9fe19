/**
 * What a merge computes from the shards' records, with the code a run computes it with
 * (run/phase.ts): the summary ({@link SummaryBuilder}), the start-up split, the per-server split
 * (several `--url`), the per-turn split, and each shard's request and error counts. Memory: what those keep (the metric
 * values, for exact percentiles, past a bound in sorted runs on disk), never the records.
 */
import type { Slo } from '../metrics/goodput.js';
import { type PerTurnSection, PerTurnSplit } from '../metrics/per-turn.js';
import { ServerSplit, type ServerSummary } from '../metrics/servers.js';
import { type StartUpSection, StartUpSplit } from '../metrics/start-up.js';
import { SummaryBuilder } from '../metrics/summary.js';
import type { OverheadOf } from '../metrics/usage-check.js';
import type { SpillBudget } from '../metrics/value-store.js';
import type { MergedLine } from './record-stream.js';

/** Requests and failed requests of one shard, counted from its records. */
export interface SourceCounts {
  requests: number;
  errors: number;
}

/** Settings of a {@link RecordFold}: the shards' run options that decide the summary. */
export interface FoldOptions {
  /** `--goodput` SLOs; none: no goodput metrics. */
  slos: readonly Slo[];
  overheadOf: OverheadOf;
  /** When the load began, on the records' time base (ns): the start-up window starts here. */
  startNs: number;
  /** The run's servers in `--url` order; with more than one, a `servers` section is built. */
  urls: readonly string[];
  /** Number of sources (shards) the lines come from. */
  sources: number;
  /** Where the metric values spill past their bound (metrics/value-store.ts). */
  spill: SpillBudget;
}

/** Folds merged record lines as a run folds its records. */
export class RecordFold {
  readonly summary: SummaryBuilder;
  private readonly startUp: StartUpSplit;
  private readonly servers: ServerSplit | null;
  private readonly perTurn: PerTurnSplit;
  private readonly spill: SpillBudget;
  /** Counts per source, by the lines' `source`. */
  readonly perSource: SourceCounts[];

  constructor(opts: FoldOptions) {
    this.spill = opts.spill;
    this.summary = new SummaryBuilder({ slos: opts.slos, overheadOf: opts.overheadOf, spill: opts.spill });
    this.startUp = new StartUpSplit(opts.startNs);
    this.servers = opts.urls.length > 1 ? new ServerSplit(opts.urls) : null;
    this.perTurn = new PerTurnSplit(opts.spill);
    this.perSource = Array.from({ length: opts.sources }, () => ({ requests: 0, errors: 0 }));
  }

  /**
   * Folds in one line. `ideal` (merge/merged-ideal.ts): the merged ideal of the requests by
   * `x_request_id`; a valid record listed there has its `ideal_cached_tokens` replaced (dropped when
   * the merged cache had filled) before it is summarized.
   */
  add(line: MergedLine, ideal?: ReadonlyMap<string, number | null>): void {
    const { record } = line;
    const merged = ideal?.get(record.raw.xRequestId);
    if (merged !== undefined && record.metrics.ideal_cached_tokens !== undefined) {
      if (merged === null) delete record.metrics.ideal_cached_tokens;
      else record.metrics.ideal_cached_tokens = merged;
    }
    this.summary.add(record);
    this.startUp.add(record);
    this.servers?.add(record);
    this.perTurn.add(record);
    const counts = this.perSource[line.source] as SourceCounts;
    counts.requests++;
    if (!record.valid) counts.errors++;
  }

  /** Sorted runs and bytes the metric values spilled to disk so far. */
  spillUsed(): { runs: number; bytes: number } {
    return { runs: this.spill.runs, bytes: this.spill.spilledBytes };
  }

  /** The `start_up` section; null when no request fell in its window. */
  startUpSection(): StartUpSection | null {
    return this.startUp.build();
  }

  /**
   * The `per_turn` section (null when no record had a turn index above 0); frees its values, so it
   * is built once.
   */
  perTurnSection(): PerTurnSection | null {
    const section = this.perTurn.build();
    this.perTurn.release();
    return section;
  }

  /** The `servers` section; null with a single server. */
  serversSection(): ServerSummary[] | null {
    return this.servers?.build() ?? null;
  }
}
