/**
 * How many connections to the target to open before the first measured request, and why.
 *
 * An open-loop run at 1,000 requests/s that starts with no connection opens one per in-flight
 * request during its first second: a few hundred TCP handshakes while the schedule is already
 * running, each inside some request's TTFT, and enough work for a server to fall behind accepting
 * them (measured against a stub: arrival lateness p99 170–360 ms in the first 2 s, 10–45 ms after).
 * Pre-opening the connections the run will hold moves that cost before time zero. No HTTP request
 * is sent; warm-up requests are `--warmup-request-count`'s job.
 *
 * Sizing: `--prewarm-connections` when given; else the concurrency; else the requests expected in
 * flight, the rate × {@link PREWARM_LIFE_S} (for a fixed schedule, the busiest second of its first
 * {@link PREWARM_LOOKAHEAD_S} s); always at most {@link PREWARM_CAP}. A streamed trace is not read
 * ahead, so it gets {@link PREWARM_STREAMED}.
 */

import type { RunPlan } from '../config/plan.js';
import type { Dataset } from '../dataset/types.js';

/** Connections of a phase's pool without `--concurrency` (run/phase.ts). */
export const PHASE_CONNECTIONS = 2500;

/** Most connections pre-opened without `--prewarm-connections`. */
export const PREWARM_CAP = 256;

/**
 * Connections pre-opened for a streamed trace, whose rate is not known before it is read (enough for
 * the first ~100 ms of a 1,000 requests/s replay; a slower trace leaves most of them unused for 2 s).
 */
export const PREWARM_STREAMED = 64;

/** The life of a request assumed when nothing is known of the server yet, s. */
export const PREWARM_LIFE_S = 1;

/** How far into a fixed schedule its busiest second is looked for, s. */
export const PREWARM_LOOKAHEAD_S = 10;

/** How many connections to pre-open, and the sentence that says why. */
export interface PrewarmPlan {
  count: number;
  basis: string;
}

/** The pre-open plan of the profiling phase (see the module comment). */
export function prewarmPlan(
  config: Pick<RunPlan, 'prewarmConnections' | 'load' | 'stop'>,
  dataset: Dataset,
  streamed: boolean,
): PrewarmPlan {
  const plan = autoOrAsked(config, dataset, streamed);
  // Never more connections than the run's pool holds, nor than it has requests.
  const limit = Math.min(
    config.load.concurrency ?? PHASE_CONNECTIONS,
    config.stop.requestCount ?? Number.POSITIVE_INFINITY,
  );
  return plan.count > limit
    ? { count: limit, basis: `${plan.basis}, at most one per request and pooled connection (${limit})` }
    : plan;
}

function autoOrAsked(
  config: Pick<RunPlan, 'prewarmConnections' | 'load'>,
  dataset: Dataset,
  streamed: boolean,
): PrewarmPlan {
  const asked = config.prewarmConnections;
  if (typeof asked === 'number') return { count: asked, basis: '--prewarm-connections' };
  const capped = (count: number, basis: string): PrewarmPlan =>
    count > PREWARM_CAP
      ? { count: PREWARM_CAP, basis: `${basis}, capped at ${PREWARM_CAP}` }
      : { count: Math.max(1, count), basis };
  const { load } = config;
  const concurrency = load.concurrency;
  if (load.kind === 'fixed_schedule') {
    if (streamed)
      return { count: PREWARM_STREAMED, basis: `streamed trace, not read ahead: ${PREWARM_STREAMED}` };
    const busiest = busiestSecond(dataset);
    const plan = capped(busiest, `busiest second of the schedule's first ${PREWARM_LOOKAHEAD_S} s`);
    return concurrency !== undefined && concurrency < plan.count
      ? capped(concurrency, '--concurrency')
      : plan;
  }
  if (load.kind === 'request_rate') {
    const series = load.rate.series;
    const peak = series === undefined ? load.rate.ratePerS : Math.max(...series.points.map((p) => p.qps));
    const expected = Math.ceil(peak * PREWARM_LIFE_S);
    if (concurrency !== undefined && concurrency < expected) return capped(concurrency, '--concurrency');
    const rate = series === undefined ? '--request-rate' : 'the series’ peak qps';
    return capped(expected, `${rate} × ${PREWARM_LIFE_S} s`);
  }
  if (load.kind === 'user_centric') {
    // Each user holds at most one request in flight; the fresh user of the opening can add one.
    const users = load.users + 1;
    return concurrency !== undefined && concurrency < users
      ? capped(concurrency, '--concurrency')
      : capped(users, '--num-users + 1');
  }
  return capped(load.concurrency, '--concurrency');
}

/**
 * Most turns whose trace timestamps fall within one second, over the schedule's first
 * {@link PREWARM_LOOKAHEAD_S} s (1 for a dataset without timestamps); also `--workers auto`'s rate
 * of a fixed schedule (run/workers-auto.ts).
 */
export function busiestSecond(dataset: Dataset): number {
  let zero = Number.POSITIVE_INFINITY;
  for (const conversation of dataset.conversations)
    for (const turn of conversation.turns) zero = Math.min(zero, turn.timestampMs ?? zero);
  if (zero === Number.POSITIVE_INFINITY) return 1;
  const times: number[] = [];
  const endMs = zero + PREWARM_LOOKAHEAD_S * 1000;
  for (const conversation of dataset.conversations)
    for (const turn of conversation.turns)
      if (turn.timestampMs !== undefined && turn.timestampMs <= endMs) times.push(turn.timestampMs);
  times.sort((a, b) => a - b);
  let best = 0;
  let from = 0;
  for (let to = 0; to < times.length; to++) {
    while ((times[to] as number) - (times[from] as number) >= 1000) from++;
    best = Math.max(best, to - from + 1);
  }
  return best;
}
