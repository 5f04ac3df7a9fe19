/**
 * The merged summary's `shards` section, the merged `run_status` and the console lines that say
 * what was merged: per shard its requests and errors (counted from its records), start skew, clock
 * offset, how its run ended and its client-health verdict; and what is missing.
 */
import { EXIT_NO_SUCCESS } from '../errors.js';
import { type RequestTarget, runStatusOf } from '../export/run-status.js';
import type { RunStatus } from '../export/summary-json.js';
import type { Summary } from '../metrics/summary.js';
import type { SourceCounts } from './record-fold.js';
import type { ShardFolder } from './shard-folder.js';
import type { ShardSet } from './shard-set.js';

/** One shard of the `shards` section. */
export interface ShardEntry {
  /** Its folder, as given. */
  dir: string;
  /** `shard.index`; null for a run that failed before writing its shard section. */
  index: number | null;
  /** Lines of its `profile_export.jsonl` merged. */
  requests: number;
  /** Of those, failed requests (cancelled ones included). */
  errors: number;
  /** `shard.sessions`: the sessions of its share; null without a shard section. */
  sessions: number | null;
  /** `shard.first_send_skew_ms`: its first send's lateness against the common start; null when not measured. */
  first_send_skew_ms: number | null;
  /** `shard.clock.offset_ms` and `uncertainty_ms`: its clock against the reference; null when not measured. */
  clock_offset_ms: number | null;
  clock_uncertainty_ms: number | null;
  /** Its own `run_status`. */
  run_status: RunStatus;
  /** Its `client_health` status and verdict; null when it has none. */
  client_health: { status: string; verdict: string } | null;
}

/** The `shards` section of a merged summary. */
export interface ShardsSection {
  /** `shard.count`: shards of the sharded run. */
  count: number;
  /** Folders merged (a failed shard's records included). */
  merged: number;
  /** Indices no folder had. */
  missing: number[];
  /** `shard.start_at` shared by the shards (ISO), null when they started without one. */
  start_at: string | null;
  /** `shard.session_hash` shared by the shards. */
  session_hash: string;
  /** One entry per folder, by index (folders without a shard section last). */
  per_shard: ShardEntry[];
}

function entryOf(folder: ShardFolder, counts: SourceCounts): ShardEntry {
  const s = folder.shard;
  return {
    dir: folder.dir,
    index: s?.index ?? null,
    requests: counts.requests,
    errors: counts.errors,
    sessions: s?.sessions ?? null,
    first_send_skew_ms: s?.first_send_skew_ms ?? null,
    clock_offset_ms: s?.clock?.offset_ms ?? null,
    clock_uncertainty_ms: s?.clock?.uncertainty_ms ?? null,
    run_status: folder.summary.run_status as RunStatus,
    client_health: folder.summary.client_health ?? null,
  };
}

/** The section, `folders` being the set's shards then its unidentified folders, `counts` theirs. */
export function shardsSection(
  set: ShardSet,
  folders: readonly ShardFolder[],
  counts: readonly SourceCounts[],
): ShardsSection {
  const first = set.shards[0]?.shard;
  return {
    count: set.count,
    merged: folders.length,
    missing: set.missing,
    start_at: first?.start_at ?? null,
    session_hash: first?.session_hash ?? '',
    per_shard: folders.map((f, i) => entryOf(f, counts[i] as SourceCounts)),
  };
}

/**
 * The merged run's `run_status`: as a run's (completed, or failed with exit 3 when no request
 * succeeded), except that gaps make a succeeding merge `partial` (exit 0: `--allow-partial` asked
 * for it), and a failed one says them too.
 */
export function mergedStatus(summary: Summary, gaps: readonly string[], target: RequestTarget): RunStatus {
  const status = runStatusOf({
    summary,
    interrupted: false,
    inputError: null,
    issued: summary.metrics.request_count?.avg ?? 0,
    ...target,
  });
  if (gaps.length === 0) return status;
  const partial = `partial: ${gaps.join('; ')}`;
  if (status.exit_code === EXIT_NO_SUCCESS) return { ...status, reason: `${status.reason}; ${partial}` };
  return { status: 'partial', reason: gaps.join('; '), exit_code: 0 };
}

function ms(value: number): string {
  return `${Math.round(value * 1000) / 1000} ms`;
}

/** The console line of one shard, e.g. `Shard 1 (dir): 250 requests (2 failed), 40 sessions; first send skew 0.4 ms; …`. */
export function shardLine(e: ShardEntry): string {
  const failed = e.errors > 0 ? ` (${e.errors} failed)` : '';
  const sessions = e.sessions === null ? '' : `, ${e.sessions} sessions`;
  const parts = [`Shard ${e.index ?? '?'} (${e.dir}): ${e.requests} requests${failed}${sessions}`];
  if (e.first_send_skew_ms !== null) parts.push(`first send skew ${ms(e.first_send_skew_ms)}`);
  if (e.clock_offset_ms !== null)
    parts.push(`clock offset ${ms(e.clock_offset_ms)} ± ${ms(e.clock_uncertainty_ms ?? 0)}`);
  if (e.run_status.status !== 'completed')
    parts.push(`run ${e.run_status.status}${e.run_status.reason === null ? '' : `: ${e.run_status.reason}`}`);
  if (e.client_health !== null) parts.push(`client health ${e.client_health.verdict}`);
  return parts.join('; ');
}

/** Console line of the whole set, e.g. `Merged: 4 of 4 shards, 1,000 requests, by request_end_ns`. */
export function mergedLine(section: ShardsSection, records: number): string {
  const missing = section.missing.length === 0 ? '' : `; missing: ${section.missing.join(', ')}`;
  return `Merged: ${section.merged} ${section.merged === 1 ? 'folder' : 'folders'} of ${section.count} shards, ${records.toLocaleString('en-US')} requests${missing}`;
}

/**
 * A shard clock offset at or under this many ms is never warned about (the floor of the clock rule):
 * a server that changes its `Date` late (a busy Node event loop; uvicorn every 0.1 s) reads tens of
 * ms low on one machine (−30.6 ± 13.5 ms measured), and a window that far off moves no throughput
 * of a run of seconds.
 */
export const CLOCK_WARN_MS = 50;
/** A shard clock offset is warned about only when it exceeds this many times its own uncertainty. */
export const CLOCK_WARN_UNCERTAINTIES = 2;

/**
 * Whether a shard's measured clock offset is worth a warning: |offset| > {@link CLOCK_WARN_UNCERTAINTIES}
 * × its uncertainty and > {@link CLOCK_WARN_MS}. An offset inside its own uncertainty (two processes
 * on one machine measure a few ms either way against a server's `Date` header) says nothing.
 */
export function clockOffsetWarrantsWarning(offsetMs: number, uncertaintyMs: number): boolean {
  const off = Math.abs(offsetMs);
  return off > CLOCK_WARN_UNCERTAINTIES * uncertaintyMs && off > CLOCK_WARN_MS;
}

/**
 * One warning per shard whose clock offset passes {@link clockOffsetWarrantsWarning}, with the
 * offset and its uncertainty: the merge does not shift a shard's times, so the benchmark window (and
 * every rate over it) may be off by as much.
 */
export function clockWarnings(section: ShardsSection): string[] {
  return section.per_shard
    .filter(
      (e) =>
        e.clock_offset_ms !== null &&
        clockOffsetWarrantsWarning(e.clock_offset_ms, e.clock_uncertainty_ms ?? 0),
    )
    .map(
      (e) =>
        `shard ${e.index}'s clock is ${ms(e.clock_offset_ms as number)} (± ${ms(e.clock_uncertainty_ms ?? 0)}) off the reference, more than ${CLOCK_WARN_UNCERTAINTIES}× its uncertainty and ${CLOCK_WARN_MS} ms: its times are merged as recorded, so the benchmark window and the throughputs over it may be off by as much`,
    );
}
