/**
 * The few numbers per request the run analysis reads (steady state, server verdict, Little's law),
 * kept as the records complete: when each started, ended and was scheduled, its TTFT and whether it
 * succeeded. A handful of numbers per request, never the records themselves.
 */
import type { LineRecord } from '../../record/types.js';

/** One request as the analysis sees it. Times are monotonic ns; durations ms. */
export interface TimelineRequest {
  startNs: number;
  endNs: number;
  /** Its scheduled send time; null without a schedule. */
  scheduledNs: number | null;
  /** `time_to_first_token`, ms; null when the request had no first token. */
  ttftMs: number | null;
  valid: boolean;
}

/** Requests of a phase, in completion order. */
export class RequestTimeline {
  private readonly requests: TimelineRequest[] = [];

  /** Adds one processed record. */
  add(record: LineRecord): void {
    const ttft = record.metrics.time_to_first_token;
    this.requests.push({
      startNs: record.raw.startNs,
      endNs: Math.max(record.raw.startNs, record.raw.endNs),
      scheduledNs: record.raw.scheduledNs,
      ttftMs: typeof ttft === 'number' ? ttft : null,
      valid: record.valid,
    });
  }

  /** The requests sorted by start time (a copy). */
  byStart(): TimelineRequest[] {
    return [...this.requests].sort((a, b) => a.startNs - b.startNs);
  }

  /** Requests added. */
  get size(): number {
    return this.requests.length;
  }
}

/** When a request arrived: its scheduled time, else its start (a closed loop has no schedule). */
export function arrivalNs(r: TimelineRequest): number {
  return r.scheduledNs ?? r.startNs;
}

/**
 * Time-average, per each of `bins` equal bins of `[fromNs, toNs]`, of the requests between their arrival and `untilNs`
 * (their end: in the system; their start: waiting on the client).
 */
export function occupancyBins(
  requests: readonly TimelineRequest[],
  fromNs: number,
  toNs: number,
  bins: number,
  untilNs: (r: TimelineRequest) => number,
): number[] {
  const width = (toNs - fromNs) / bins;
  const area = new Array<number>(bins).fill(0);
  for (const r of requests) {
    const a = Math.max(arrivalNs(r), fromNs);
    const e = Math.min(untilNs(r), toNs);
    if (!(e > a)) continue;
    const first = Math.min(bins - 1, Math.floor((a - fromNs) / width));
    const last = Math.min(bins - 1, Math.floor((e - fromNs) / width));
    for (let b = first; b <= last; b++) {
      const lo = fromNs + b * width;
      area[b] = (area[b] as number) + Math.min(e, lo + width) - Math.max(a, lo);
    }
  }
  return area.map((x) => x / width);
}
