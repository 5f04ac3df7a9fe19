/**
 * `--failed-request-threshold R` (AIPerf's flag): the profiling phase's answered requests are
 * counted as they complete; once at least {@link FAILED_THRESHOLD_MIN_REQUESTS} are counted and more
 * than the fraction R of them failed, the guard aborts its signal, which stops issuing exactly as
 * Ctrl-C does (the strategy's stop signal, then `--benchmark-grace-period` for the requests in
 * flight: ./cutoff.ts). A request the client cancelled (`--request-cancellation-rate`, or at a stop)
 * is not counted either way: it says nothing about the server. Every other failure counts (HTTP
 * errors, errors in the stream, timeouts, connection errors), as AIPerf counts error records.
 */
import { FAILED_THRESHOLD_MIN_REQUESTS } from '../config/fields-load.js';
import type { ProcessedRecord } from '../record/types.js';
import type { Clock } from '../timing/clock.js';
import type { Logger } from '../util/run-env.js';

/** The summary's `failed_request_threshold` section: the threshold, and whether and when it tripped. */
export interface FailureStopReport {
  /** `--failed-request-threshold`, a fraction in (0, 1]. */
  threshold: number;
  /** Answered requests counted before the threshold is checked. */
  min_requests: number;
  /** True when the threshold stopped the run. */
  tripped: boolean;
  /** Failed requests counted: when it tripped, else at the end. */
  failed: number;
  /** Answered requests counted (failed ones included, client cancellations not): when it tripped, else at the end. */
  counted: number;
  /** Seconds from the start of the profiling phase to the record that tripped it; null when it did not trip. */
  tripped_after_s: number | null;
}

/** Counts a profiling phase's answers and stops the phase once too many failed. */
export class FailureStop {
  private readonly controller = new AbortController();
  private failed = 0;
  private counted = 0;
  private trippedAfterS: number | null = null;

  constructor(
    private readonly threshold: number,
    private readonly clock: Clock,
    private readonly startNs: number,
    private readonly log: Logger,
  ) {}

  /** Aborted when the threshold trips. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Counts one record (once tripped, counting stops: the report keeps the counts it tripped on). */
  add(record: ProcessedRecord): void {
    if (this.trippedAfterS !== null || record.raw.cancelled) return;
    this.counted++;
    if (!record.valid) this.failed++;
    if (this.counted < FAILED_THRESHOLD_MIN_REQUESTS || this.failed <= this.threshold * this.counted) return;
    this.trippedAfterS = (this.clock.nowNs() - this.startNs) / 1e9;
    this.log.warn(`${failureStopReason(this.report())}; stopping: no new requests`);
    this.controller.abort();
  }

  report(): FailureStopReport {
    return {
      threshold: this.threshold,
      min_requests: FAILED_THRESHOLD_MIN_REQUESTS,
      tripped: this.trippedAfterS !== null,
      failed: this.failed,
      counted: this.counted,
      tripped_after_s: this.trippedAfterS === null ? null : Math.round(this.trippedAfterS * 1000) / 1000,
    };
  }
}

/**
 * The reason of a tripped threshold, one line: `--failed-request-threshold 0.3 exceeded: 12 of 20
 * answered profiling requests failed (60.0 %), 1.234 s into the run`.
 */
export function failureStopReason(r: FailureStopReport): string {
  const pct = r.counted === 0 ? 0 : (100 * r.failed) / r.counted;
  const when = r.tripped_after_s === null ? '' : `, ${r.tripped_after_s} s into the run`;
  return `--failed-request-threshold ${r.threshold} exceeded: ${r.failed} of ${r.counted} answered profiling requests failed (${pct.toFixed(1)} %)${when}`;
}
