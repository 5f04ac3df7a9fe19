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

import type { ProfileConfig } from '../config/resolve.js';
import { syntheticDefaultCount } from '../config/rules-shard.js';
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
 * The configuration one shard runs: its share of `--concurrency`, `--request-rate` and
 * `--request-count` (a synthetic run's default count split too); the configuration itself when
 * the run is not sharded. The config rules (config-shard-fields.ts) leave every shard at least one.
 */
export function shareConfig(config: ProfileConfig): ProfileConfig {
  const shard = shardOf(config);
  if (shard === null) return config;
  const requestCount = config.requestCount ?? syntheticDefaultCount(config);
  return {
    ...config,
    ...(config.concurrency === undefined ? {} : { concurrency: splitCount(config.concurrency, shard) }),
    ...(config.requestRate === undefined ? {} : { requestRate: config.requestRate / shard.count }),
    ...(requestCount === undefined ? {} : { requestCount: splitCount(requestCount, shard) }),
  };
}

/**
 * A shard's arrivals at its share `ratePerS` of the rate: the first one index/R after the start
 * (R the whole rate), intervals from a random stream of its own; nothing for an unsharded run.
 */
export function shardArrivals(
  config: ProfileConfig,
  ratePerS: number,
): Pick<RatePlan, 'firstTickNs' | 'stream'> {
  const shard = shardOf(config);
  if (shard === null) return {};
  return {
    firstTickNs: (shard.index * 1e9) / (ratePerS * shard.count),
    stream: `arrivals:shard${shard.index}/${shard.count}`,
  };
}

/** How a configuration's sessions are assigned to shards: by entry for synthetic data, else by id hash. */
export function sessionAssignment(config: Pick<ProfileConfig, 'inputFile'>): 'fnv1a64' | 'entry_index' {
  return config.inputFile === undefined ? 'entry_index' : 'fnv1a64';
}

/**
 * The log line of a shard: how its sessions are chosen and its share of the load; null unsharded.
 */
export function shardDescription(config: ProfileConfig): string | null {
  const shard = shardOf(config);
  if (shard === null) return null;
  const how =
    sessionAssignment(config) === 'entry_index'
      ? `synthetic entries k with k mod ${shard.count} = ${shard.index}`
      : `sessions whose id's FNV-1a 64 mod ${shard.count} = ${shard.index}`;
  const share = [
    config.concurrency === undefined ? null : `--concurrency ${config.concurrency}`,
    config.requestRate === undefined ? null : `--request-rate ${config.requestRate}`,
    config.requestCount === undefined ? null : `--request-count ${config.requestCount}`,
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
  config: ProfileConfig,
  dataset: Dataset,
  stream: TraceStream | null,
): ShardInputs {
  const shard = shardOf(config);
  if (shard === null) return { dataset, stream };
  const zero = config.fixedSchedule && config.fixedScheduleAutoOffset;
  if (stream !== null) {
    const sharded = shardTraceStream(stream, shard);
    return { dataset, stream: sharded.stream, ...(zero ? { autoZeroMs: sharded.earliestStartMs } : {}) };
  }
  const autoZero = zero ? { autoZeroMs: earliestFirstTurnMs(dataset.conversations) } : {};
  return { dataset: shardDataset(dataset, shard, sessionAssignment(config)), stream: null, ...autoZero };
}
