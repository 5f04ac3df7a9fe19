/**
 * How a phase ends the requests still in flight, timed on the run's clock: the grace period after
 * Ctrl-C / SIGTERM, at once on a second Ctrl-C, and at the `--benchmark-duration` cut-off plus
 * `--benchmark-grace-period`; and what became of the requests in flight at that cut-off.
 */
import { InFlightSeries } from '../metrics/analysis/in-flight-series.js';
import type { RawRecord } from '../record/types.js';
import type { Clock } from '../timing/clock.js';
import type { RunEnv } from '../util/run-env.js';

/** What happened to requests in flight at the `--benchmark-duration` cut-off. */
export interface CutoffReport {
  /** Requests sent before the cut-off and not finished at it. */
  inFlightAtCutoff: number;
  /** Of those, finished (not cancelled) within the grace period. */
  completedInGrace: number;
  /** Of those, cancelled when the grace period ended. */
  cancelledAfterGrace: number;
}

/**
 * Counts requests in flight, and what became of those in flight at the duration cut-off; keeps the
 * count over time ({@link InFlightSeries}) for the run analysis.
 */
export class InFlightTracker {
  private inFlight = 0;
  private mostInFlight = 0;
  /** The count over time, on the run's clock. */
  readonly series = new InFlightSeries();

  /** @param nowNs - the run's clock (monotonic ns), read at every change. */
  constructor(private readonly nowNs: () => number) {}
  private cutoffNs: number | null = null;
  private atCutoff = 0;
  private completedInGrace = 0;
  private cancelledAfterGrace = 0;

  /** A request is about to be sent. */
  started(): void {
    this.inFlight++;
    this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
    this.series.change(this.nowNs(), 1);
  }

  /** The most requests in flight at once so far (sent, their record not yet made). */
  get most(): number {
    return this.mostInFlight;
  }

  /** A request finished (its record); counted against the cut-off when it started before it. */
  done(raw: RawRecord): void {
    this.inFlight--;
    this.series.change(this.nowNs(), -1);
    if (this.cutoffNs === null || raw.startNs > this.cutoffNs) return;
    if (raw.cancelled) this.cancelledAfterGrace++;
    else this.completedInGrace++;
  }

  /** The duration cut-off passed at `nowNs` (monotonic ns, the clock records are stamped on). */
  markCutoff(nowNs: number): void {
    this.cutoffNs = nowNs;
    this.atCutoff = this.inFlight;
  }

  /** The cut-off accounting; null when no cut-off passed. */
  report(): CutoffReport | null {
    if (this.cutoffNs === null) return null;
    return {
      inFlightAtCutoff: this.atCutoff,
      completedInGrace: this.completedInGrace,
      cancelledAfterGrace: this.cancelledAfterGrace,
    };
  }
}

/** What {@link armCancellation} needs. */
export interface CancellationArming {
  /** The run's clock: every timer below runs on it. */
  clock: Clock;
  /** Its stop signal starts the grace period; its force signal cancels at once. */
  env: RunEnv;
  /** `--benchmark-grace-period`, s. */
  gracePeriodSeconds: number;
  /** `--benchmark-duration` of the phase, ns from now; undefined without one. */
  durationNs: number | undefined;
  /**
   * Seconds in-flight requests get after the duration cut-off (`--warmup-grace-period` for a warmup;
   * Infinity: no limit); absent: `gracePeriodSeconds`.
   */
  cutoffGraceSeconds?: number;
  /** Aborting it cancels every request in flight. */
  cancel: AbortController;
  /** Told when the duration cut-off passes. */
  tracker: InFlightTracker;
  /**
   * Aborted when the duration cut-off passes: the strategy's own budget ends at about the same time,
   * but a few ms later when the machine is busy, and a request issued in that gap would be cancelled
   * at once (with a zero grace period) as soon as it began.
   */
  stopIssuing?: AbortController;
}

/**
 * Arms the timers that end in-flight requests: the grace period after the stop signal, the force
 * signal at once, and the duration cut-off (marked on the tracker) plus the grace period. Call it
 * when the phase's schedule starts.
 * @returns a disarm function: removes the listeners and stops every timer not yet fired.
 */
export function armCancellation(arming: CancellationArming): () => void {
  const { clock, env, cancel, tracker } = arming;
  const timers: Array<() => void> = [];
  const cancelAfterGrace = (graceSeconds = arming.gracePeriodSeconds): void => {
    if (Number.isFinite(graceSeconds))
      timers.push(clock.callAt(clock.nowNs() + graceSeconds * 1e9, () => cancel.abort()));
  };
  const onStop = (): void => {
    env.log.info(
      `stopping: no new requests; waiting up to ${arming.gracePeriodSeconds} s for in-flight requests`,
    );
    cancelAfterGrace();
  };
  const onForce = (): void => cancel.abort();
  if (env.stopSignal.aborted) onStop();
  else env.stopSignal.addEventListener('abort', onStop, { once: true });
  env.forceSignal?.addEventListener('abort', onForce, { once: true });
  if (arming.durationNs !== undefined) {
    const cutoffNs = clock.nowNs() + arming.durationNs;
    timers.push(
      clock.callAt(cutoffNs, () => {
        arming.stopIssuing?.abort();
        tracker.markCutoff(clock.nowNs());
        cancelAfterGrace(arming.cutoffGraceSeconds);
      }),
    );
  }
  return () => {
    env.stopSignal.removeEventListener('abort', onStop);
    env.forceSignal?.removeEventListener('abort', onForce);
    for (const disarm of timers) disarm();
  };
}
