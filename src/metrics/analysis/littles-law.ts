/**
 * Little's law as a self-check (Little 1961, Operations Research 9(3)): over a window in which the
 * system is steady, the time-average number of requests in flight L equals the arrival rate λ times
 * the mean time in the system W. Here L comes from the client's own in-flight count (each send +1,
 * each record −1: ./in-flight-series.ts), λ and W from the records that started in the window
 * (W = end − start). The two sides are bookkept independently, so a large gap means a request was
 * lost between its send and its record, counted twice, or stamped on a broken clock.
 *
 * Requests that straddle the window's edges make the two sides differ by about W / window length,
 * and the count moves at the send and at the record's arrival on the main thread, a fraction of a
 * millisecond from the request's start and end stamps. So the check warns only when the window is at
 * least {@link MIN_WINDOW_LATENCIES} mean latencies long, the gap exceeds {@link WARN_GAP}, and it
 * amounts to more than {@link MIN_GAP_MS} per request (|L/λ − W|): requests of 2 ms would otherwise
 * warn on bookkeeping alone.
 */
import { type InFlightPoint, meanInFlight } from './in-flight-series.js';
import type { TimelineRequest } from './request-timeline.js';

/** Relative gap above which the check warns. */
export const WARN_GAP = 0.1;
/** Smallest gap per request, |L/λ − W|, the check warns on, ms. */
export const MIN_GAP_MS = 1;
/** Shortest window, in mean latencies, the check warns on. */
export const MIN_WINDOW_LATENCIES = 20;

/** `steady_state.littles_law` of the summary. */
export interface LittlesLaw {
  /** L: time-average of the client's in-flight count over the window. */
  mean_in_flight: number;
  /** λ: requests started in the window / its length, per s. */
  throughput_per_s: number;
  /** W: mean (end − start) of those requests, s. */
  mean_latency_s: number;
  /** |L − λW| / max(L, λW). */
  relative_gap: number;
  /** The warning line when the gap is large on a window long enough to judge; else null. */
  warning: string | null;
}

/**
 * The check over `[startNs, endNs]`, named `where` in its warning ("the steady window", "the whole
 * run"); null when no request started in it or no in-flight series.
 */
export function littlesLaw(
  requests: readonly TimelineRequest[],
  inFlight: readonly InFlightPoint[],
  startNs: number,
  endNs: number,
  where: string,
): LittlesLaw | null {
  const inside = requests.filter((r) => r.startNs >= startNs && r.startNs <= endNs);
  const L = meanInFlight(inFlight, startNs, endNs);
  if (inside.length === 0 || L === null) return null;
  const windowS = (endNs - startNs) / 1e9;
  const lambda = inside.length / windowS;
  const W = inside.reduce((s, r) => s + (r.endNs - r.startNs), 0) / inside.length / 1e9;
  const lw = lambda * W;
  const gap = Math.max(L, lw) > 0 ? Math.abs(L - lw) / Math.max(L, lw) : 0;
  const perRequestMs = Math.abs(L / lambda - W) * 1e3;
  const judged = windowS >= MIN_WINDOW_LATENCIES * W && perRequestMs > MIN_GAP_MS;
  return {
    mean_in_flight: round(L),
    throughput_per_s: round(lambda),
    mean_latency_s: round(W),
    relative_gap: round(gap),
    warning:
      judged && gap > WARN_GAP
        ? `Little's law does not hold over ${where}: ${round(L)} requests in flight on average, but throughput × latency = ${round(lw)} (gap ${Math.round(gap * 100)} %): a request may have been lost or counted twice, or a clock jumped`
        : null,
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
