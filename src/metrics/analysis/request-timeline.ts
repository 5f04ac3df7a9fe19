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
