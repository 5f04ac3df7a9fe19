/**
 * `--start-at` and the summary's `shard` section. With `--start-at`, the profiling phase's time zero
 * is an absolute wall-clock time: the run does its start-up (tokenizer, server check, clock offset,
 * client warm-up, warmup phase, wake-up floor), waits until {@link START_AT_LEAD_MS} before it,
 * pre-opens its connections and builds its first requests, and its schedule starts at that time —
 * so the shards of a run, started apart, share one timeline. A sharded or `--start-at` run's summary
 * gets a `shard` section ({@link ShardSection}) and the console a `Shard …` line.
 */

import type { RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { ConfigError } from '../errors.js';
import { headersOf } from '../request/headers.js';
import type { Clock } from '../timing/clock.js';
import type { StrategyReport } from '../timing/types.js';
import type { RunEnv } from '../util/run-env.js';
import { type ClockMeasurement, measureClockOffset } from './clock-offset.js';
import type { RunIdentity } from './run-identity.js';
import { sessionAssignment, shardOf } from './shard-run.js';

/** A `--start-at` this far in the past when the run begins is still taken (clocks and submitters differ), ms. */
export const START_AT_PAST_TOLERANCE_MS = 1000;
/** The furthest ahead `--start-at` may be, ms (24 h). */
export const START_AT_MAX_AHEAD_MS = 24 * 3600 * 1000;
/** The run stops waiting this long before `--start-at` to pre-open connections and build the first requests, ms. */
export const START_AT_LEAD_MS = 1000;

/** `--start-at` as the summary writes it (ISO 8601, UTC). */
function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}

/**
 * Refuses a `--start-at` already past by more than {@link START_AT_PAST_TOLERANCE_MS}, or more than
 * {@link START_AT_MAX_AHEAD_MS} ahead, when the run begins.
 * @throws {ConfigError} naming `--start-at`, the time and how far it is.
 */
export function checkStartAt(config: Pick<ProfileConfig, 'startAtMs'>, nowMs: number): void {
  const at = config.startAtMs;
  if (at === undefined) return;
  const aheadMs = at - nowMs;
  if (aheadMs < -START_AT_PAST_TOLERANCE_MS)
    throw new ConfigError(
      `--start-at ${isoOf(at)} is ${(-aheadMs / 1000).toFixed(1)} s in the past (now ${isoOf(nowMs)}); give a time a few seconds ahead, enough for every shard's start-up.`,
      '--start-at',
    );
  if (aheadMs > START_AT_MAX_AHEAD_MS)
    throw new ConfigError(
      `--start-at ${isoOf(at)} is ${(aheadMs / 3600e3).toFixed(1)} h ahead; at most 24 h is allowed.`,
      '--start-at',
    );
}

/**
 * A sharded or `--start-at` run's clock offset against its (first) server, measured once it
 * answers and logged; null for other runs, and when Ctrl-C came first.
 */
export async function measureRunClock(
  config: RunPlan,
  targets: readonly string[],
  clock: Clock,
  env: RunEnv,
): Promise<ClockMeasurement | null> {
  const url = targets[0];
  if ((shardOf(config) === null && config.startAtMs === undefined) || url === undefined) return null;
  if (env.stopSignal.aborted) return null;
  const t0 = performance.now();
  const measured = await measureClockOffset({
    url,
    headers: headersOf(config),
    clock,
    signal: env.stopSignal,
  });
  const took = `${Math.round(performance.now() - t0)} ms`;
  const c = measured.clock;
  if (c === null) env.log.warn(`clock offset not measured (${took}): ${measured.reason}`);
  else
    env.log.info(
      `clock offset against ${c.reference}: ${c.offset_ms.toFixed(3)} ± ${c.uncertainty_ms.toFixed(3)} ms (${c.basis}; ${took})`,
    );
  return measured;
}

/** Monotonic ns (this process's `performance.now()`) of epoch ms `ms`, on the records' time base. */
function monotonicNsOf(ms: number): number {
  return (ms - performance.timeOrigin) * 1e6;
}

/**
 * Waits for `--start-at` (until {@link START_AT_LEAD_MS} before it; Ctrl-C ends the wait) and
 * returns its monotonic ns, the profiling schedule's time zero; undefined without `--start-at`.
 */
export async function waitForStartAt(ctx: {
  config: Pick<ProfileConfig, 'startAtMs'>;
  clock: Clock;
  env: RunEnv;
}): Promise<number | undefined> {
  const at = ctx.config.startAtMs;
  if (at === undefined) return undefined;
  const anchorNs = monotonicNsOf(at);
  const leftMs = (anchorNs - ctx.clock.nowNs()) / 1e6;
  if (leftMs < 0) {
    ctx.env.log.warn(
      `--start-at ${isoOf(at)} passed ${(-leftMs / 1000).toFixed(2)} s before this run was ready: its schedule starts late, and each request's schedule_lag says by how much`,
    );
  } else {
    ctx.env.log.info(`start-up done; waiting ${(leftMs / 1000).toFixed(1)} s for --start-at ${isoOf(at)}`);
    await ctx.clock.sleepUntil(anchorNs - START_AT_LEAD_MS * 1e6, ctx.env.stopSignal);
  }
  return anchorNs;
}

/**
 * Per record, the earliest-started request (its start and scheduled times) and which sessions sent
 * anything (a bit per `session_num`, which counts a phase's sessions from 0).
 */
export class SendTally {
  /** Monotonic ns the earliest request started, and its scheduled time; null before any. */
  first: { startNs: number; scheduledNs: number | null } | null = null;
  private bits = new Uint8Array(64);
  /** Distinct sessions seen. */
  sessions = 0;

  add(raw: { startNs: number; scheduledNs: number | null; sessionNum: number }): void {
    if (this.first === null || raw.startNs < this.first.startNs)
      this.first = { startNs: raw.startNs, scheduledNs: raw.scheduledNs };
    const byte = raw.sessionNum >>> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(byte + 1, this.bits.length * 2));
      grown.set(this.bits);
      this.bits = grown;
    }
    const bit = 1 << (raw.sessionNum & 7);
    if (((this.bits[byte] as number) & bit) === 0) this.sessions++;
    this.bits[byte] = (this.bits[byte] as number) | bit;
  }
}

/**
 * The summary's `shard` section (a sharded or `--start-at` run). The contract `tokenload merge`
 * reads: keep these names.
 */
export interface ShardSection {
  /** `--shard-index` (0 without sharding). */
  index: number;
  /** `--shard-count` (1 without sharding). */
  count: number;
  /** `--start-at` as ISO 8601 UTC; null without it. */
  start_at: string | null;
  /** `--start-at`, epoch ms; null without it. */
  start_at_ms: number | null;
  /** How sessions were assigned to shards: `fnv1a64` (of the session id) or `entry_index` (synthetic data). */
  session_hash: string;
  /**
   * The first request's start (`request_start_ns`) minus `--start-at` plus its scheduled offset (0
   * without a schedule), ms, on this process's clock; null without `--start-at` or without a request.
   */
  first_send_skew_ms: number | null;
  /** This process's clock against the server's (shard/clock-offset.ts); null when not measured. */
  clock: ClockMeasurement['clock'];
  /** Sessions that sent at least one request. */
  sessions: number;
  /** Requests in `profile_export.jsonl`. */
  requests: number;
  /** What `tokenload merge` compares so that only shards of one run merge (shard/run-identity.ts). */
  run_identity: RunIdentity;
}

/** The section, its console line and any warning, for {@link finishRun}. */
export interface ShardReport {
  section: ShardSection;
  line: string;
  warnings: string[];
}

/**
 * The shard report of a profiling phase; null for a run neither sharded nor started at a set time.
 * `identity` is the run's {@link RunIdentity} (runIdentityOf of the configuration as asked).
 */
export function shardReport(
  config: RunPlan,
  phase: { tally: SendTally; recordCount: number; load: StrategyReport; interrupted: boolean },
  measured: ClockMeasurement | null,
  identity: RunIdentity,
): ShardReport | null {
  const shard = shardOf(config);
  const at = config.startAtMs;
  if (shard === null && at === undefined) return null;
  const first = phase.tally.first;
  const skewNs =
    at === undefined || first === null ? null : first.startNs - (first.scheduledNs ?? phase.load.startNs);
  const section: ShardSection = {
    index: shard?.index ?? 0,
    count: shard?.count ?? 1,
    start_at: at === undefined ? null : isoOf(at),
    start_at_ms: at ?? null,
    session_hash: sessionAssignment(config),
    first_send_skew_ms: skewNs === null ? null : Math.round(skewNs / 1e3) / 1e3,
    clock: measured?.clock ?? null,
    sessions: phase.tally.sessions,
    requests: phase.recordCount,
    run_identity: identity,
  };
  const reason = measured?.reason ?? null;
  const warnings = reason === null ? [] : [`clock offset not measured: ${reason}`];
  if (shard !== null && shard.count > 1 && phase.tally.sessions === 0 && !phase.interrupted)
    warnings.push(
      `shard ${shard.index} of ${shard.count} sent nothing: no session of the input fell to it (give fewer shards than sessions)`,
    );
  return { section, line: shardLine(section), warnings };
}

function shardLine(s: ShardSection): string {
  const who = s.count > 1 ? `Shard ${s.index} of ${s.count} (0-based)` : 'Start';
  const parts = [`${who}: ${s.requests} requests in ${s.sessions} sessions`];
  if (s.start_at !== null) {
    const skew = s.first_send_skew_ms;
    parts.push(
      `start at ${s.start_at}${skew === null ? ', nothing sent' : `, first send ${skew.toFixed(3)} ms after its schedule`}`,
    );
  }
  const c = s.clock;
  parts.push(
    c === null
      ? 'clock offset not measured'
      : `clock offset ${c.offset_ms >= 0 ? '+' : ''}${c.offset_ms.toFixed(3)} ± ${c.uncertainty_ms.toFixed(3)} ms against ${c.reference}`,
  );
  return parts.join('; ');
}
