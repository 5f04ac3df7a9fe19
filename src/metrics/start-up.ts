/**
 * The run's first seconds beside the rest. A load generator that starts cold (code not yet
 * compiled, connections not yet open, a server still accepting them) sends its first requests late
 * and sees their first tokens late; averaged over a long run, that start-up effect disappears from
 * the percentiles. This section keeps it visible: how late requests reached the wire, and TTFT, for
 * requests scheduled (or, without a schedule, begun) in the first {@link START_UP_WINDOW_S} s of
 * the profiling phase, and for all later ones.
 */
import type { LineRecord } from '../record/types.js';
import { type TailStats, tailStats } from './stats.js';

/** Length of the start-up window, s. */
export const START_UP_WINDOW_S = 2;

/** The metrics compared, by tag (all ms). */
const TAGS = ['schedule_lag', 'client_lag', 'connection_wait', 'time_to_first_token'] as const;

/** Percentiles of one metric in one part of the run, ms. */
export type StartUpStats = TailStats;

/** One part of the run: its request count and, per metric with values, its percentiles (`<tag>_ms`). */
export type StartUpPart = { requests: number } & Partial<Record<`${(typeof TAGS)[number]}_ms`, StartUpStats>>;

/** `start_up` section of the summary. */
export interface StartUpSection {
  window_s: number;
  first: StartUpPart;
  /** Null when every request fell in the window (a run shorter than it). */
  rest: StartUpPart | null;
}

/** Collects the values of the compared metrics, split at the end of the start-up window. */
export class StartUpSplit {
  private readonly parts = [new PartValues(), new PartValues()] as const;

  /** @param fromNs monotonic ns the phase's load began. */
  constructor(private readonly fromNs: number) {}

  /** Adds one record to its part (by scheduled time, else start time). */
  add(record: LineRecord): void {
    const at = record.raw.scheduledNs ?? record.raw.startNs;
    const part = at - this.fromNs < START_UP_WINDOW_S * 1e9 ? this.parts[0] : this.parts[1];
    part.add(record);
  }

  /** The section; null when no request fell in the window. */
  build(): StartUpSection | null {
    const [first, rest] = this.parts;
    if (first.requests === 0) return null;
    return {
      window_s: START_UP_WINDOW_S,
      first: first.build(),
      rest: rest.requests === 0 ? null : rest.build(),
    };
  }
}

class PartValues {
  requests = 0;
  private readonly values = TAGS.map(() => [] as number[]);

  add(record: LineRecord): void {
    this.requests++;
    for (let i = 0; i < TAGS.length; i++) {
      const value = record.metrics[TAGS[i] as string];
      if (typeof value === 'number') this.values[i]?.push(value);
    }
  }

  build(): StartUpPart {
    const part: StartUpPart = { requests: this.requests };
    for (let i = 0; i < TAGS.length; i++) {
      const list = this.values[i] as number[];
      if (list.length > 0) part[`${TAGS[i] as (typeof TAGS)[number]}_ms`] = tailStats(list);
    }
    return part;
  }
}

/** The console line comparing the two parts, e.g. `Start-up: first 2 s (1,990 requests) …`. */
export function startUpLine(section: StartUpSection): string {
  const describe = (part: StartUpPart): string => {
    const lag = part.schedule_lag_ms;
    const ttft = part.time_to_first_token_ms;
    const bits = [`${part.requests} ${part.requests === 1 ? 'request' : 'requests'}`];
    if (lag !== undefined) bits.push(`schedule lag p50 ${lag.p50} / p99 ${lag.p99} ms`);
    if (ttft !== undefined) bits.push(`TTFT p50 ${ttft.p50} / p99 ${ttft.p99} ms`);
    return bits.join(', ');
  };
  const rest = section.rest === null ? 'none (the run was shorter)' : describe(section.rest);
  return `Start-up: first ${section.window_s} s: ${describe(section.first)}; after: ${rest}`;
}
