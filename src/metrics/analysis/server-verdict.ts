/**
 * A verdict on the server, beside the one on the client: did the offered load exceed what the server
 * could serve, so that the latency figures measure a growing queue rather than service?
 *
 * Read over the arrival period (first to last arrival; an arrival is a request's scheduled time,
 * else its start) in {@link BINS} time bins: the requests in the system per bin (time-average of
 * those between arrival and end: waiting on the client, such as behind a `--concurrency` cap, or in
 * flight) and the median wait of the successful requests arriving in each bin (TTFT from arrival;
 * request latency from arrival when the run has no TTFT). Counting from arrival keeps a queue the
 * client held visible (coordinated omission would hide it).
 *
 * - A signal *rises* when the Mann–Kendall test (./trend.ts) finds a rising trend at z ≥
 *   {@link Z_RISING} (one-sided p ≈ 0.001) and the rise is material: the mean of the last fifth of the
 *   bins is at least {@link MATERIAL_RATIO} × that of the first fifth (bin 0, the fill-up, left out)
 *   and at least {@link MATERIAL_IN_FLIGHT} requests (in the system) or {@link MATERIAL_TTFT_MS} ms
 *   (the wait) above it. A rank test sees a backlog that grows like √t (a server exactly at capacity) as a rise.
 * - `overloaded`: both rise; a queue grew while each request waited longer. The reason says when
 *   the queue grew on the client (more than half of it, late in the run, not yet sent).
 * - `unstable`: the wait rises but the requests in the system do not: the server slowed down under a
 *   load that did not grow (throttling, cache thrash, a noisy neighbour).
 * - `ok`: the wait does not rise. Requests in the system rising alone is the offered load rising (a
 *   trace's own shape), served without a wait; the evidence says so.
 * - A closed loop (`--concurrency` without a rate) holds its requests in flight at its level, so only
 *   the wait can rise: `ok` or `unstable`.
 * - `unknown`: the client did not deliver the load (its verdict saturated; or late by more than a
 *   tenth of the waits the verdict rests on: {@link judgeServer}), or too few requests to judge.
 *
 * `since_s` is where the queue began to grow: a one-sided CUSUM on the count in the system's change from
 * bin to bin (how much faster requests arrived than they left), against 0 (a queue that does not
 * grow), with k = σ/2 and h = 5σ, σ the robust spread of the first fifth's changes (at least half a
 * request). Queueing delay rises a little before capacity (waits grow with utilization), so the
 * change of the count, not TTFT, marks when arrivals outran the server. `onset_request_rate_per_s`
 * is the offered rate then (requests scheduled, else started, per second over the onset's bin and
 * {@link RATE_HALF_WIDTH} bins either side, widened until it holds {@link MIN_RATE_REQUESTS}); `queue_growth_per_s` Sen's slope of the count after it.
 */
import { arrivalNs, occupancyBins, type TimelineRequest } from './request-timeline.js';
import { cusumOnset, mannKendall, median, robustSigma, senSlope } from './trend.js';

/** Time bins of the sending period. */
export const BINS = 30;
/** Mann–Kendall z at which a signal counts as rising (one-sided p ≈ 0.001). */
export const Z_RISING = 3.09;
/** Last fifth over first fifth that makes a rise material. */
export const MATERIAL_RATIO = 1.5;
/** Smallest material rise of in-flight requests. */
export const MATERIAL_IN_FLIGHT = 3;
/** Smallest material rise of TTFT, ms. */
export const MATERIAL_TTFT_MS = 5;
/** Bins either side of the onset's over which the offered rate is read. */
export const RATE_HALF_WIDTH = 2;
/** How many times the client's send lag p99 the wait must be for a late client's verdict to stand. */
export const LATE_CLIENT_FACTOR = 10;
/** Fewest bins with a successful request's wait for a verdict (of {@link BINS}). */
export const MIN_WAIT_BINS = 10;
/** Fewest arrivals the onset's offered rate is read over. */
export const MIN_RATE_REQUESTS = 20;
/** Fewest requests judged. */
export const MIN_REQUESTS = 30;
/** Above this share of failed requests an `ok` verdict says it was read from the answers only (the tails' lead share). */
export const FAILED_SHARE = 0.05;

/** `server_verdict` section of the summary. */
export interface ServerVerdict {
  status: 'ok' | 'overloaded' | 'unstable' | 'unknown';
  /** One plain sentence: why this status. */
  reason: string;
  /** Growth of the requests in the system after the onset, requests per second; null when not overloaded. */
  queue_growth_per_s: number | null;
  /** When the rise began, s from the first request start; null without one. */
  since_s: number | null;
  /** The offered request rate when the rise began, requests/s; null without one. */
  onset_request_rate_per_s: number | null;
  /** The figures the verdict rests on, in words. */
  evidence: string[];
}

/** What {@link judgeServer} reads. */
export interface ServerVerdictInput {
  /** The phase's requests (any order). */
  requests: readonly TimelineRequest[];
  /** True for a closed loop (`--concurrency` without a rate). */
  closedLoop: boolean;
  /** The client-health status; `saturated` makes the verdict unknown, `late` unless the wait rose far more. */
  clientStatus: string | null;
  /** The client's send lag p99 (`client_health.send_lag_ms.p99`), ms; null without a schedule. */
  sendLagP99Ms: number | null;
}

/**
 * The server verdict of a run (see the module comment). A saturated client did not deliver the load:
 * `unknown`. A late one did, only later than asked: its verdict stands when its send lag p99 is at
 * most 1 / {@link LATE_CLIENT_FACTOR} of the scale of what the verdict rests on (the early wait, or
 * the wait's rise when larger): a lateness of milliseconds neither makes nor hides a queue of
 * seconds. Else `unknown`.
 */
export function judgeServer(input: ServerVerdictInput): ServerVerdict {
  if (input.clientStatus === 'saturated')
    return unknown(
      'the client did not deliver the load (client health: saturated), so the server cannot be judged on it',
    );
  const judged = judgeLoad(input);
  if (input.clientStatus !== 'late' || judged.verdict.status === 'unknown') return judged.verdict;
  const lagMs = input.sendLagP99Ms ?? Number.POSITIVE_INFINITY;
  const scaleMs = Math.max(judged.waitRiseMs, judged.earlyWaitMs);
  if (LATE_CLIENT_FACTOR * lagMs <= scaleMs) {
    judged.verdict.evidence.push(
      `the client was late (send lag p99 ${fmt(lagMs)} ms), too little to matter against waits of ${fmt(scaleMs)} ms`,
    );
    return judged.verdict;
  }
  return unknown(
    `the client was late (send lag p99 ${fmt(lagMs)} ms), not small beside the waits this run measured (${fmt(scaleMs)} ms), so what it shows of the server cannot be told from the client's lateness`,
  );
}

/** What {@link judgeLoad} found: the verdict, and the wait it rests on (ms). */
interface Judged {
  verdict: ServerVerdict;
  /** The wait's rise, late fifth − early fifth; 0 when it did not rise. */
  waitRiseMs: number;
  /** The early fifth's median wait; 0 when not measured. */
  earlyWaitMs: number;
}

/** The verdict on the load the client sent, with the wait it rests on. */
function judgeLoad(input: ServerVerdictInput): Judged {
  let earlyWaitMs = 0;
  const judged = (v: ServerVerdict, waitRiseMs = 0): Judged => ({ verdict: v, waitRiseMs, earlyWaitMs });
  if (input.requests.length < MIN_REQUESTS)
    return judged(
      unknown(`too few requests to judge the server (${input.requests.length} < ${MIN_REQUESTS})`),
    );
  const requests = [...input.requests].sort((x, y) => arrivalNs(x) - arrivalNs(y));
  const fromNs = arrivalNs(requests[0] as TimelineRequest);
  const toNs = arrivalNs(requests[requests.length - 1] as TimelineRequest);
  if (!(toNs > fromNs)) return judged(unknown('every request arrived at once'));
  const inSystem = occupancyBins(requests, fromNs, toNs, BINS, (r) => r.endNs);
  const waits = waitBins(requests, fromNs, toNs);
  const load = rise(inSystem, MATERIAL_IN_FLIGHT);
  const measured = waits.values.filter((v) => Number.isFinite(v)).length;
  if (measured < MIN_WAIT_BINS)
    return judged(
      unknown(
        `too few successful requests to read a wait from (${waits.successes} succeeded): whether the server kept up is unknown`,
      ),
    );
  const wait = rise(waits.values, MATERIAL_TTFT_MS);
  earlyWaitMs = Number.isFinite(wait.early) ? wait.early : 0;
  const evidence = [
    `waiting or in flight: ${fmt(load.early)} early, ${fmt(load.late)} late (Mann–Kendall z ${load.z.toFixed(1)})`,
    `${waits.label} median: ${fmt(wait.early)} ms early, ${fmt(wait.late)} ms late (Mann–Kendall z ${wait.z.toFixed(1)})`,
  ];
  if (!wait.rising) {
    if (load.rising && !input.closedLoop)
      evidence.push(
        'requests in the system rose with the offered load while the wait did not: the server kept up',
      );
    return judged(
      verdict(
        'ok',
        `${waits.label} did not rise through the run${failedNote(input, waits.successes)}`,
        evidence,
      ),
    );
  }
  const riseMs = wait.late - wait.early;
  if (input.closedLoop || !load.rising)
    return judged(
      verdict(
        'unstable',
        `${waits.label} rose through the run while the load held (${input.closedLoop ? 'closed loop' : 'requests in the system did not rise'}): the server slowed down`,
        evidence,
      ),
      riseMs,
    );
  return judged(overloaded(requests, inSystem, fromNs, toNs, waits.label, evidence), riseMs);
}

/**
 * `, read from the 12 answers of 38 requests (26 failed: …)` when more than {@link FAILED_SHARE} of
 * the requests failed: the verdict reads queueing from the answers only, so an `ok` over a server
 * that failed most requests must say so. Empty otherwise.
 */
function failedNote(input: ServerVerdictInput, successes: number): string {
  const total = input.requests.length;
  const failed = total - successes;
  if (failed <= FAILED_SHARE * total) return '';
  return `, read from the ${successes} answers of ${total} requests (${failed} failed: the verdict judges only how fast the server answered; see the error summary)`;
}

/** The `overloaded` verdict: where the queue began to grow, the offered rate then, and where it grew. */
function overloaded(
  requests: readonly TimelineRequest[],
  inSystem: readonly number[],
  fromNs: number,
  toNs: number,
  label: string,
  evidence: string[],
): ServerVerdict {
  const binS = (toNs - fromNs) / BINS / 1e9;
  const onsetBin = onset(inSystem) ?? 0;
  const sinceS = onsetBin * binS;
  const growth = senSlope(inSystem.slice(onsetBin), binS);
  const rate = onsetRate(requests, fromNs, binS, onsetBin);
  // The part of the queue that waited on the client (a --concurrency cap, a prefill gate) before its send.
  const queued = occupancyBins(requests, fromNs, toNs, BINS, (r) => Math.min(r.startNs, r.endNs));
  const late = (xs: readonly number[]): number =>
    mean(xs.slice(xs.length - Math.max(1, Math.floor(xs.length / 5))));
  const onClient = late(queued) > 0.5 * late(inSystem);
  if (onClient)
    evidence.push(`${fmt(late(queued))} of them were waiting on the client to be sent, late in the run`);
  const served = servedRate(requests, fromNs, toNs);
  const reason = onClient
    ? `the queue grew on the client, behind its --concurrency cap, by ${fmt(growth)} requests/s from ${sinceS.toFixed(1)} s, while ${label} rose: the schedule offered ${fmt(rate)} req/s then and the server, given at most the cap's requests at once, answered ${fmt(served)} req/s; a higher --concurrency shows whether the server itself keeps up`
    : `the queue grew by ${fmt(growth)} requests/s from ${sinceS.toFixed(1)} s while ${label} rose: the offered load (${fmt(rate)} req/s then) exceeded what the server could serve (${fmt(served)} req/s answered), and the latency figures measure queueing`;
  return {
    status: 'overloaded',
    reason,

    queue_growth_per_s: round3(growth),
    since_s: round3(sinceS),
    onset_request_rate_per_s: round3(rate),
    evidence,
  };
}

interface Rise {
  rising: boolean;
  z: number;
  early: number;
  late: number;
}

/** Whether `values` (time bins, NaN for empty ones) rise materially and significantly. */
function rise(values: readonly number[], minStep: number): Rise {
  const present = values.filter((v) => Number.isFinite(v));
  const fifth = Math.max(1, Math.floor(present.length / 5));
  const early = mean(present.slice(1, 1 + fifth));
  const late = mean(present.slice(present.length - fifth));
  const z = mannKendall(present).z;
  const material = late >= MATERIAL_RATIO * early && late - early >= minStep;
  return { rising: z >= Z_RISING && material, z, early, late };
}

/**
 * Median TTFT (else request latency) of the successful requests arriving in each bin, from their
 * arrival (so a wait on the client before the send counts), ms; NaN for a bin without one.
 */
function waitBins(
  requests: readonly TimelineRequest[],
  fromNs: number,
  toNs: number,
): { values: number[]; label: string; successes: number } {
  const withTtft = requests.some((r) => r.valid && r.ttftMs !== null);
  const width = (toNs - fromNs) / BINS;
  const groups: number[][] = Array.from({ length: BINS }, () => []);
  for (const r of requests) {
    if (!r.valid) continue;
    const fromArrivalMs = (r.startNs - arrivalNs(r)) / 1e6;
    const v = withTtft ? r.ttftMs : (r.endNs - r.startNs) / 1e6;
    if (v === null) continue;
    groups[Math.min(BINS - 1, Math.floor((arrivalNs(r) - fromNs) / width))]?.push(v + fromArrivalMs);
  }
  const scheduled = requests.some((r) => r.scheduledNs !== null);
  const label = `${withTtft ? 'TTFT' : 'request latency'}${scheduled ? ' from the schedule' : ''}`;
  const successes = groups.reduce((n, g) => n + g.length, 0);
  return { values: groups.map(median), label, successes };
}

/** The bin where the count in the system began to grow for good (CUSUM on its changes); null when never. */
function onset(inSystem: readonly number[]): number | null {
  const changes = inSystem.slice(1).map((v, i) => v - (inSystem[i] as number));
  const early = changes.slice(1, 1 + Math.max(2, Math.floor(changes.length / 5)));
  const sigma = Math.max(robustSigma(early), 0.5);
  const at = cusumOnset(changes, 0, sigma / 2, 5 * sigma);
  return at === null ? null : at + 1;
}

/**
 * The offered rate around the onset's bin: over it and {@link RATE_HALF_WIDTH} bins either side,
 * widened a bin at a time until it holds {@link MIN_RATE_REQUESTS} arrivals (a handful would make a
 * rate of noise).
 */
function onsetRate(
  requests: readonly TimelineRequest[],
  fromNs: number,
  binS: number,
  onsetBin: number,
): number {
  let rate = 0;
  for (let half = RATE_HALF_WIDTH; half <= BINS; half++) {
    const lo = Math.max(0, onsetBin - half);
    const hi = Math.min(BINS, onsetBin + half + 1);
    rate = offeredRate(requests, fromNs + lo * binS * 1e9, fromNs + hi * binS * 1e9);
    if (rate * (hi - lo) * binS >= MIN_RATE_REQUESTS) break;
  }
  return rate;
}

/** Requests answered per second over `[fromNs, toNs]` (ends in it). */
function servedRate(requests: readonly TimelineRequest[], fromNs: number, toNs: number): number {
  let n = 0;
  for (const r of requests) if (r.endNs >= fromNs && r.endNs <= toNs) n++;
  return toNs > fromNs ? n / ((toNs - fromNs) / 1e9) : 0;
}

/** Requests scheduled (else started) per second in `[fromNs, toNs)`. */
function offeredRate(requests: readonly TimelineRequest[], fromNs: number, toNs: number): number {
  let n = 0;
  for (const r of requests) {
    const at = r.scheduledNs ?? r.startNs;
    if (at >= fromNs && at < toNs) n++;
  }
  return toNs > fromNs ? n / ((toNs - fromNs) / 1e9) : 0;
}

function unknown(reason: string): ServerVerdict {
  return verdict('unknown', reason, []);
}

function verdict(status: ServerVerdict['status'], reason: string, evidence: string[]): ServerVerdict {
  return {
    status,
    reason,
    queue_growth_per_s: null,
    since_s: null,
    onset_request_rate_per_s: null,
    evidence,
  };
}

function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return 'n/a';
  return Math.abs(x) >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(1);
}
