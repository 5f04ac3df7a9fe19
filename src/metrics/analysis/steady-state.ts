/**
 * The steady-state window of a run: the part between the ramp-up (connections opening, a queue
 * filling, caches warming) and the drain (the last requests finishing after the last send), over
 * which throughput and latency describe the server under the load asked for.
 *
 * - `--steady-state START_PCT:END_PCT`: the given share of the run's span (`user_range`).
 * - Closed loop (`--concurrency N` without a rate): from the first moment the client's in-flight
 *   count reaches its level (90 % of N, or of the most it reached) to the last moment it is there
 *   (`closed_loop_in_flight`).
 * - Open loop and trace replay: MSER-5 truncation (./mser.ts) of three signals, each in time order:
 *   in-flight requests in time bins, request latency and TTFT of the successful requests by start. The
 *   window starts where the latest of them settles; it ends where the in-flight series, read
 *   backwards, settles (the drain), at the last request start at the latest (`mser5`).
 *
 * The whole run is kept instead, with the reason, when: fewer than {@link MIN_REQUESTS} requests;
 * a signal never settles (MSER-5's minimum in its second half: the run is still changing at its end);
 * the signals' start points lie more than {@link MAX_DISAGREEMENT} of the run apart; or the window
 * is shorter than {@link MIN_FRACTION} of the run.
 */
import type { InFlightPoint } from './in-flight-series.js';
import { binnedInFlight } from './in-flight-series.js';
import { MSER_BATCH, mser5 } from './mser.js';
import type { TimelineRequest } from './request-timeline.js';

/** Fewest requests a window is searched with. */
export const MIN_REQUESTS = 50;
/** Shortest window kept, as a fraction of the run's span. */
export const MIN_FRACTION = 0.5;
/** Widest gap between the signals' start points, as a fraction of the run's span. */
export const MAX_DISAGREEMENT = 0.25;
/** Time bins of the in-flight series. */
const IN_FLIGHT_BINS = 200;

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
  /** Requests that started in the window. */
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
}

/** The steady-state window of a run with at least one request (see the module comment). */
export function steadyWindow(input: SteadyInput): SteadyWindow {
  const { requests } = input;
  const runStartNs = (requests[0] as TimelineRequest).startNs;
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
  const found =
    input.closedLoopConcurrency === null
      ? openLoopBounds(input, runStartNs)
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

/** MSER-5 on in-flight bins, latency and TTFT; a reason when a signal never settles or they disagree. */
function openLoopBounds(input: SteadyInput, runStartNs: number): Bounds | string {
  const { requests } = input;
  const lastStartNs = (requests[requests.length - 1] as TimelineRequest).startNs;
  const binNs = (lastStartNs - runStartNs) / IN_FLIGHT_BINS;
  if (!(binNs > 0)) return 'every request started at once';
  const bins = binnedInFlight(input.inFlight, runStartNs, lastStartNs, IN_FLIGHT_BINS);
  const valid = requests.filter((r) => r.valid);
  const starts: Array<[string, number | null]> = [
    ['in-flight requests', settledAt(bins, (i) => runStartNs + i * binNs)],
    ['request latency', settledAt(valid.map(latencyMs), (i) => (valid[i] as TimelineRequest).startNs)],
    [
      'TTFT',
      settledAt(
        valid.filter((r) => r.ttftMs !== null).map((r) => r.ttftMs as number),
        (i) => (valid.filter((r) => r.ttftMs !== null)[i] as TimelineRequest).startNs,
      ),
    ],
  ];
  const unsettled = starts.find(([, at]) => at === null);
  if (unsettled !== undefined) return `${unsettled[0]} never settled: still changing at the end of the run`;
  const times = starts.map(([, at]) => at as number);
  const span = lastStartNs - runStartNs;
  const spread = Math.max(...times) - Math.min(...times);
  if (spread > MAX_DISAGREEMENT * span)
    return `the signals disagree: ${starts.map(([name, at]) => `${name} settled at ${(((at as number) - runStartNs) / 1e9).toFixed(1)} s`).join(', ')}`;
  const end = mser5([...bins].reverse());
  const endNs = end.settled ? lastStartNs - end.truncate * binNs : lastStartNs;
  return { startNs: Math.max(...times), endNs, method: 'mser5' };
}

/** The time a series settles at (MSER-5 truncation mapped to time), null when it never does. */
function settledAt(values: readonly number[], timeOf: (index: number) => number): number | null {
  if (values.length < 4 * MSER_BATCH) return timeOf(0);
  const r = mser5(values);
  return r.settled ? timeOf(r.truncate) : null;
}

function latencyMs(r: TimelineRequest): number {
  return (r.endNs - r.startNs) / 1e6;
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
  const inside = requests.filter((r) => r.startNs >= startNs && r.startNs <= endNs).length;
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
