/**
 * The cross-field rules of `--request-rate-series`: it is the run's rate, so it cannot be combined
 * with another rate (AIPerf refuses `--request-rate` and `--user-centric-rate` with it), a ramp, a
 * fixed schedule or shards; and a series whose last point is at time 0 needs a stop of its own.
 */
import type { ConfigRule, RuleInput } from './rule-types.js';

/** The option the series cannot be combined with, and why; null when there is none. */
function conflictOf(c: RuleInput, fixedSchedule: boolean): string | null {
  if (c.requestRate !== undefined) return '--request-rate (the series is the rate; AIPerf’s rule)';
  if (c.userCentricRate !== undefined) return '--user-centric-rate (the series is the rate; AIPerf’s rule)';
  if (c.requestRateRampSeconds !== undefined)
    return '--request-rate-ramp-duration (write the ramp as the series’ first points)';
  if (fixedSchedule)
    return 'a fixed schedule (--no-fixed-schedule to drive a timestamped trace by the series)';
  if (c.shardCount !== undefined) return '--shard-count (not implemented for a rate series)';
  return null;
}

/** The rules of `--request-rate-series`; `fixedSchedule` tells whether the run replays timestamps. */
export function rateSeriesRules(fixedSchedule: (c: RuleInput) => boolean): ConfigRule[] {
  return [
    {
      option: '--request-rate-series',
      check: (c) => {
        if (c.requestRateSeries === undefined) return null;
        const conflict = conflictOf(c, fixedSchedule(c));
        return conflict === null ? null : `--request-rate-series cannot be combined with ${conflict}.`;
      },
    },
    {
      option: '--request-rate-series',
      check: (c) => {
        const series = c.requestRateSeries;
        if (series === undefined || c.requestCount !== undefined || c.benchmarkDurationSeconds !== undefined)
          return null;
        if ((series.points.at(-1)?.time_s ?? 0) > 0) return null;
        return `--request-rate-series ${series.file}: its only point is at time_s 0, and without --request-count or --benchmark-duration the run ends at the last point: add a later point, or one of those.`;
      },
    },
  ];
}
