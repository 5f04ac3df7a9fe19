/**
 * The steady-state window of a run: the part between the ramp-up (connections opening, a queue
 * filling, caches warming) and the drain (the last requests finishing after the last send), over
 * which throughput and latency describe the server under the load asked for.
 *
 * - `--steady-state START_PCT:END_PCT`: the given share of the run's span (`user_range`).
 * - Closed loop (`--concurrency N` without a rate): from the first moment the client's in-flight
 *   count reaches its level (90 % of N, or of the most it reached) to the last moment it is there
 *   (`closed_loop_in_flight`).
 * - Open loop and trace replay: MSER-5 truncation (./mser.ts) of three signals, each read from
 *   arrival (a request's scheduled time, else its start), so a queue on the client counts: requests
 *   in the system (arrived, not yet answered) in time bins, and request latency and TTFT from arrival
 *   of the successful requests, in arrival order. The window starts where the latest of them settles
 *   and ends where the in-system series, read backwards, settles (the drain), at the last arrival at
 *   the latest (`mser5`).
 *
 * The whole run is kept instead, with the reason, when: fewer than {@link MIN_REQUESTS} requests;
 * the server verdict found the wait rising through the run (`overloaded` or `unstable`: no part of
 * such a run is steady); a signal never settles (MSER-5's minimum at its half-way bound: still
 * changing); or the window is shorter than {@link MIN_FRACTION} of the run.
 */
import type { InFlightPoint } from './in-flight-series.js';
import { MSER_BATCH, mser5 } from './mser.js';
import { arrivalNs, occupancyBins, type TimelineRequest } from './request-timeline.js';

/** Fewest requests a window is searched with. */
export const MIN_REQUESTS = 50;
/** Shortest window kept, as a fraction of the run's span. */
export const MIN_FRACTION = 0.5;
/** Time bins of the requests-in-the-system series. */
const IN_SYSTEM_BINS = 200;

/** `--steady-state`: auto (detect), off, or a share of the run in percent. */
export type SteadyStateOption =
  | { kind: 'auto' }
  | { kind: 'off' }
  | { kind: 'range'; startPct: number; endPct: number };

/** How the window was found. */
export type SteadyMethod = 'user_range' | 'closed_loop_in_flight' | 'mser5' | 'whole_run';

/** A steady-state window on the run's monotonic clock. */
export interface SteadyWindow {
  startNs: number;
  endNs: number;
  method: SteadyMethod;
  /** Window length / the run's span (first request start → last request end). */
  fractionOfRun: number;
  /** Requests that arrived in the window (scheduled time, else start). */
  requests: number;
  /** Why the whole run is used instead of a detected window; null when a window was used. */
  fallbackReason: string | null;
}

/** What {@link steadyWindow} reads. */
export interface SteadyInput {
  /** The phase's requests, sorted by start. */
  requests: readonly TimelineRequest[];
  /** The client's in-flight checkpoints (./in-flight-series.ts). */
  inFlight: readonly InFlightPoint[];
  /** The concurrency of a closed-loop run; null for open loop and replay. */
  closedLoopConcurrency: number | null;
  option: Exclude<SteadyStateOption, { kind: 'off' }>;
  /** The server verdict's status (./server-verdict.ts): `overloaded` and `unstable` leave no steady part. */
  serverStatus: string | null;
}

/**
 * The run's first moment: the earliest request start or arrival (a scheduled time can precede its
 * start), monotonic ns; the origin of `start_s` and of the run's span.
 */
export function firstMomentNs(requests: readonly TimelineRequest[]): number {
  let first = Number.POSITIVE_INFINITY;
  for (const r of requests) first = Math.min(first, r.startNs, arrivalNs(r));
  return first;
}

/** The steady-state window of a run with at least one request (see the module comment). */
export function steadyWindow(input: SteadyInput): SteadyWindow {
  const { requests } = input;
  const runStartNs = firstMomentNs(requests);
  const runEndNs = requests.reduce((end, r) => Math.max(end, r.endNs), runStartNs);
  const whole = (reason: string | null, method: SteadyMethod = 'whole_run'): SteadyWindow =>
    windowOf(requests, runStartNs, runEndNs, runStartNs, runEndNs, method, reason);
  if (input.option.kind === 'range') {
    const span = runEndNs - runStartNs;
    const { startPct, endPct } = input.option;
    return windowOf(
      requests,
      runStartNs,
      runEndNs,
      runStartNs + (span * startPct) / 100,
      runStartNs + (span * endPct) / 100,
      'user_range',
      null,
    );
  }
  if (requests.length < MIN_REQUESTS)
    return whole(`too few requests to find a steady state (${requests.length} < ${MIN_REQUESTS})`);
  if (input.serverStatus === 'overloaded' || input.serverStatus === 'unstable')
    return whole(
      `the wait rose through the run (server verdict: ${input.serverStatus}), so no part of it is steady`,
    );
  const found =
    input.closedLoopConcurrency === null
      ? openLoopBounds(input)
      : closedLoopBounds(input.inFlight, input.closedLoopConcurrency);
  if (typeof found === 'string') return whole(found);
  const window = windowOf(requests, runStartNs, runEndNs, found.startNs, found.endNs, found.method, null);
  if (window.fractionOfRun < MIN_FRACTION)
    return whole(
      `the steady part (${pct(window.fractionOfRun)} of the run) is shorter than ${pct(MIN_FRACTION)} of it`,
    );
  return window;
}

interface Bounds {
  startNs: number;
  endNs: number;
  method: SteadyMethod;
}

/** From the first to the last checkpoint with in-flight at 90 % of its level; a reason when never. */
function closedLoopBounds(points: readonly InFlightPoint[], concurrency: number): Bounds | string {
  const peak = points.reduce((m, p) => Math.max(m, p.count), 0);
  const level = Math.max(1, Math.floor(0.9 * Math.min(concurrency, peak)));
  const at = points.filter((p) => p.count >= level);
  const first = at[0];
  const last = at[at.length - 1];
  if (first === undefined || last === undefined || last.atNs <= first.atNs)
    return `in-flight requests never held ${level} (concurrency ${concurrency})`;
  return { startNs: first.atNs, endNs: last.atNs, method: 'closed_loop_in_flight' };
}

/** MSER-5 on requests in the system, latency and TTFT, all from arrival; a reason when a signal never settles. */
function openLoopBounds(input: SteadyInput): Bounds | string {
  const requests = [...input.requests].sort((x, y) => arrivalNs(x) - arrivalNs(y));
  const fromNs = arrivalNs(requests[0] as TimelineRequest);
  const lastNs = arrivalNs(requests[requests.length - 1] as TimelineRequest);
  const binNs = (lastNs - fromNs) / IN_SYSTEM_BINS;
  if (!(binNs > 0)) return 'every request arrived at once';
  const bins = occupancyBins(requests, fromNs, lastNs, IN_SYSTEM_BINS, (r) => r.endNs);
  const valid = requests.filter((r) => r.valid);
  const withTtft = valid.filter((r) => r.ttftMs !== null);
  const fromArrivalMs = (r: TimelineRequest): number => (r.startNs - arrivalNs(r)) / 1e6;
  const starts: Array<[string, number | null]> = [
    ['requests in the system', settledAt(bins, (i) => fromNs + i * binNs, fromNs)],
    [
      'request latency',
      settledAt(
        valid.map((r) => (r.endNs - arrivalNs(r)) / 1e6),
        (i) => arrivalNs(valid[i] as TimelineRequest),
        fromNs,
      ),
    ],
    [
      'TTFT',
      settledAt(
        withTtft.map((r) => (r.ttftMs as number) + fromArrivalMs(r)),
        (i) => arrivalNs(withTtft[i] as TimelineRequest),
        fromNs,
      ),
    ],
  ];
  const unsettled = starts.find(([, at]) => at === null);
  if (unsettled !== undefined) return `${unsettled[0]} never settled: still changing at the end of the run`;
  const end = mser5([...bins].reverse());
  const endNs = end.settled ? lastNs - end.truncate * binNs : lastNs;
  return { startNs: Math.max(...starts.map(([, at]) => at as number)), endNs, method: 'mser5' };
}

/** The time a series settles at (MSER-5 truncation mapped to time), null when it never does. */
function settledAt(
  values: readonly number[],
  timeOf: (index: number) => number,
  startNs: number,
): number | null {
  // Too few values to judge (none at all: a run without TTFT): this signal does not move the start.
  if (values.length < 4 * MSER_BATCH) return startNs;
  const r = mser5(values);
  return r.settled ? timeOf(r.truncate) : null;
}

function windowOf(
  requests: readonly TimelineRequest[],
  runStartNs: number,
  runEndNs: number,
  startNs: number,
  endNs: number,
  method: SteadyMethod,
  fallbackReason: string | null,
): SteadyWindow {
  const span = runEndNs - runStartNs;
  const inside = requests.filter((r) => arrivalNs(r) >= startNs && arrivalNs(r) <= endNs).length;
  return {
    startNs,
    endNs,
    method,
    fractionOfRun: span > 0 ? (endNs - startNs) / span : 1,
    requests: inside,
    fallbackReason,
  };
}

function pct(f: number): string {
  return `${Math.round(f * 100)} %`;
}
