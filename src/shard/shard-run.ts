/**
 * One shard of a run spread over several processes (`--shard-index i --shard-count n`): which part
 * of the work it does. Every shard reads the same input and keeps its sessions (dataset/shard.ts);
 * a fixed schedule keeps the unsharded run's time zero, so each request is scheduled at the same
 * offset as in the unsharded run. The load is divided:
 * - `--concurrency C`: ⌊C/n⌋ session slots, plus one for the shards with index < C mod n;
 * - `--request-count N` (and a synthetic run's default count): the same split of N;
 * - `--request-rate R`: R/n per shard, shard i's first arrival i/R after the start, its own random
 *   stream of intervals (constant arrivals then interleave into the unsharded run's ticks; Poisson
 *   shards add up to a Poisson process of rate R).
 * The summary's `input_config` keeps the values as given (the whole run's); the load line says the share.
 */

import type { RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import { type ShardSpec, shardDataset, shardTraceStream } from '../dataset/shard.js';
import type { Dataset, TraceStream } from '../dataset/types.js';
import { earliestFirstTurnMs, type ScheduleZero } from '../timing/fixed-schedule.js';
import type { RatePlan } from '../timing/registry.js';

/** The shard a configuration runs, or null for an unsharded run. */
export function shardOf(config: Pick<ProfileConfig, 'shardIndex' | 'shardCount'>): ShardSpec | null {
  const { shardIndex: index, shardCount: count } = config;
  return index === undefined || count === undefined ? null : { index, count };
}

/** A shard's part of `total`: ⌊total/n⌋, plus one for the shards with index < total mod n. */
export function splitCount(total: number, shard: ShardSpec): number {
  return Math.floor(total / shard.count) + (shard.index < total % shard.count ? 1 : 0);
}

/**
 * The plan one shard runs: its share of `--concurrency`, `--request-rate` and `--request-count` (a
 * synthetic run's default count split too); the plan itself when the run is not sharded. The config
 * rules (config/rules-shard.ts) leave every shard at least one.
 */
export function sharePlan(plan: RunPlan): RunPlan {
  const shard = shardOf(plan);
  if (shard === null) return plan;
  const split = (n: number | undefined) => (n === undefined ? {} : { concurrency: splitCount(n, shard) });
  const { load, stop } = plan;
  const shared: RunPlan['load'] =
    load.kind === 'request_rate'
      ? {
          ...load,
          rate: { ...load.rate, ratePerS: load.rate.ratePerS / shard.count },
          ...split(load.concurrency),
        }
      : load.kind === 'concurrency'
        ? { ...load, concurrency: splitCount(load.concurrency, shard) }
        : { ...load, ...split(load.concurrency) };
  const requestCount =
    stop.requestCount === undefined ? {} : { requestCount: splitCount(stop.requestCount, shard) };
  const sessionCount =
    stop.sessionCount === undefined ? {} : { sessionCount: splitCount(stop.sessionCount, shard) };
  return { ...plan, load: shared, stop: { ...stop, ...requestCount, ...sessionCount } };
}

/**
 * A shard's arrivals at its share `ratePerS` of the rate: the first one index/R after the start
 * (R the whole rate), intervals from a random stream of its own; nothing for an unsharded run.
 */
export function shardArrivals(
  plan: Pick<RunPlan, 'shardIndex' | 'shardCount'>,
  ratePerS: number,
): Pick<RatePlan, 'firstTickNs' | 'stream'> {
  const shard = shardOf(plan);
  if (shard === null) return {};
  return {
    firstTickNs: (shard.index * 1e9) / (ratePerS * shard.count),
    stream: `arrivals:shard${shard.index}/${shard.count}`,
  };
}

/** How a run's sessions are assigned to shards: by entry for synthetic data, else by id hash. */
export function sessionAssignment(plan: Pick<RunPlan, 'input'>): 'fnv1a64' | 'entry_index' {
  return plan.input.kind === 'synthetic' ? 'entry_index' : 'fnv1a64';
}

/**
 * The log line of a shard: how its sessions are chosen and its share of the load; null unsharded.
 * @param plan the shard's plan ({@link sharePlan}).
 * @param asked the run's configuration as given: only the options given are named.
 */
export function shardDescription(plan: RunPlan, asked: ProfileConfig): string | null {
  const shard = shardOf(plan);
  if (shard === null) return null;
  const how =
    sessionAssignment(plan) === 'entry_index'
      ? `synthetic entries k with k mod ${shard.count} = ${shard.index}`
      : `sessions whose id's FNV-1a 64 mod ${shard.count} = ${shard.index}`;
  const { load, stop } = plan;
  const share = [
    asked.concurrency === undefined ? null : `--concurrency ${load.concurrency}`,
    load.kind === 'request_rate' ? `--request-rate ${load.rate.ratePerS}` : null,
    stop.requestCount === undefined ? null : `--request-count ${stop.requestCount}`,
    stop.sessionCount === undefined ? null : `--conversation-num ${stop.sessionCount}`,
  ].filter((s) => s !== null);
  return `shard ${shard.index} of ${shard.count}: ${how}${share.length === 0 ? '' : `; its share: ${share.join(', ')}`}`;
}

/** A shard's input: its share of the dataset or stream, and the unsharded run's time zero. */
export interface ShardInputs {
  dataset: Dataset;
  stream: TraceStream | null;
  /** With auto-offset on a fixed schedule: the whole trace's time zero (fixed-schedule.ts); else undefined. */
  autoZeroMs?: ScheduleZero;
}

/**
 * Cuts the run's input to the shard's sessions; unchanged for an unsharded run.
 * @throws {ScheduleError} for a trace loaded whole whose first turns lack timestamps, as the unsharded
 *   replay does.
 */
export function shardInputs(
  plan: Pick<RunPlan, 'shardIndex' | 'shardCount' | 'load' | 'input'>,
  dataset: Dataset,
  stream: TraceStream | null,
): ShardInputs {
  const shard = shardOf(plan);
  if (shard === null) return { dataset, stream };
  const zero = plan.load.kind === 'fixed_schedule' && plan.load.zero.kind === 'auto';
  if (stream !== null) {
    const sharded = shardTraceStream(stream, shard);
    return { dataset, stream: sharded.stream, ...(zero ? { autoZeroMs: sharded.earliestStartMs } : {}) };
  }
  const autoZero = zero ? { autoZeroMs: earliestFirstTurnMs(dataset.conversations) } : {};
  return { dataset: shardDataset(dataset, shard, sessionAssignment(plan)), stream: null, ...autoZero };
}
