/**
 * This process's clock against a clock every shard of a run can reach: the target server's, read
 * from the HTTP `Date` header of small `GET /v1/models` requests. `Date` has one-second resolution,
 * but the moment it changes is sharp: a response stamped with second D was made at server time in
 * [D, D + 1 s), somewhere between the request's send and its answer on this clock, so each probe
 * around the edge of a second bounds the offset (server − local): the last probe answered with
 * the old second to below k − its send, the first answered with the new one to at least k − its
 * answer. Probes every {@link SWEEP_SPACING_MS} ms until the second changes find an edge to that
 * plus a round trip; back-to-back probes around the next edge narrow it to about a round trip (the
 * narrower of the two edges' intervals is kept). The interval holds whatever the timing of the probes, for a server that stamps `Date` when it answers; a
 * server that changes its `Date` late (Node's http refreshes it by a timer, late when its event
 * loop is busy; uvicorn every 0.1 s) makes the offset read low by that delay, which the interval
 * does not show. The whole measurement takes at most about {@link CLOCK_BUDGET_MS} ms.
 */
import { Agent, request } from 'undici';
import { requestPathFor } from '../endpoint/types.js';
import type { Clock } from '../timing/clock.js';

/** The summary's `shard.clock`: this process's clock against a reference it could reach. */
export interface ClockOffset {
  /** Reference minus this process's clock, ms: added to this run's epoch times, they read on the reference. */
  offset_ms: number;
  /** Half the width of the interval the offset was shown to lie in, ms. */
  uncertainty_ms: number;
  /** How it was measured, e.g. `HTTP Date header second edge, 93 probes of GET /v1/models`. */
  basis: string;
  /** The clock measured against: the server's origin. */
  reference: string;
}

/** A measurement: the offset, or null and why not. */
export interface ClockMeasurement {
  clock: ClockOffset | null;
  /** Why there is no offset (no `Date` header, probes failed, disagreeing headers); null with one. */
  reason: string | null;
}

/** Spacing of the first sweep's probes, over one second and a bit, ms. */
const SWEEP_SPACING_MS = 20;
/** The first sweep stops once an answer shows a new second, or after this long, ms. */
const SWEEP_MAX_MS = 2000;
/** Lanes of back-to-back probes around the next edge: the probes are a quarter round trip apart. */
const EDGE_LANES = 4;
/**
 * The edge burst covers this much more on each side of where the first sweep puts the edge, ms: a
 * server's `Date` can change later at one second than at another (a busy event loop), and the burst
 * must still see the change.
 */
const LATE_EDGE_MS = 10;
/** Longest one probe may take, ms. */
const PROBE_TIMEOUT_MS = 2000;
/** The measurement gives up the edge burst when it would end later than this after its start, ms. */
export const CLOCK_BUDGET_MS = 3000;

/** Epoch ms now, on the clock the records' timestamps use (performance.timeOrigin, timing/clock.ts). */
function epochNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** One probe: this clock's send and answer times (epoch ms) and the `Date` it answered with. */
interface Probe {
  sentMs: number;
  answeredMs: number;
  /** Epoch ms of the `Date` header; null without one. */
  dateMs: number | null;
}

/** Sends one `GET`; its answer's `Date` (any HTTP status), or the error. */
async function probe(url: string, headers: Record<string, string>, agent: Agent): Promise<Probe | Error> {
  const sentMs = epochNowMs();
  try {
    const res = await request(url, {
      method: 'GET',
      headers,
      dispatcher: agent,
      headersTimeout: PROBE_TIMEOUT_MS,
      bodyTimeout: PROBE_TIMEOUT_MS,
    });
    const answeredMs = epochNowMs();
    await res.body.dump();
    const date = res.headers.date;
    const dateMs = typeof date === 'string' ? Date.parse(date) : Number.NaN;
    return { sentMs, answeredMs, dateMs: Number.isFinite(dateMs) ? dateMs : null };
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * The offset interval [low, high) (ms) from the probes around one edge `kMs` (epoch ms of a server
 * second, as `Date` reads): those answered with the second before it and with it. One edge only: a
 * server's `Date` may change a little after the second begins (Node's is refreshed by a timer that
 * a busy event loop runs late), by a different delay at each edge, and probes of two edges would
 * then contradict each other. Within one edge the answers are consistent, and that delay is a bias
 * the interval does not show.
 */
interface EdgeBounds {
  low: number;
  high: number;
}

function edgeBounds(probes: readonly Probe[], kMs: number): EdgeBounds {
  let low = Number.NEGATIVE_INFINITY;
  let high = Number.POSITIVE_INFINITY;
  for (const p of probes) {
    if (p.dateMs === kMs) low = Math.max(low, kMs - p.answeredMs);
    else if (p.dateMs === kMs - 1000) high = Math.min(high, kMs - p.sentMs);
  }
  return { low, high };
}

/** The first server second the probes saw begin (the earliest `Date` after the earliest one); undefined when none. */
function firstEdgeMs(probes: readonly Probe[]): number | undefined {
  const dates = probes.map((p) => p.dateMs).filter((d): d is number => d !== null);
  const earliest = Math.min(...dates);
  const later = dates.filter((d) => d > earliest);
  return later.length === 0 ? undefined : Math.min(...later);
}

/** What a measurement needs. */
export interface ClockProbeTarget {
  /** The server's base URL (`--url`): probes go to its `/v1/models`. */
  url: string;
  /** Headers of every probe (`-H`, `--api-key`). */
  headers: Record<string, string>;
  /** The run's clock: probes are sent at its times. */
  clock: Clock;
  /** Aborting stops the measurement (no offset). */
  signal: AbortSignal;
}

/**
 * Measures this clock's offset against the server's `Date` (see the module comment).
 * @returns the offset, or null with the reason; never throws for a server's answers.
 */
export async function measureClockOffset(target: ClockProbeTarget): Promise<ClockMeasurement> {
  const origin = new URL(target.url).origin;
  const path = requestPathFor(target.url, '/v1/models');
  const agent = new Agent();
  const send = (): Promise<Probe | Error> => probe(`${origin}${path}`, target.headers, agent);
  const startMs = epochNowMs();
  try {
    const sweep = answeredOrProblem(await sweepUntilEdge(target, send, startMs));
    if (typeof sweep === 'string') return { clock: null, reason: sweep };
    const edge = firstEdgeMs(sweep);
    if (edge === undefined)
      return { clock: null, reason: `the Date header did not change within ${SWEEP_MAX_MS / 1000} s` };
    let bounds = edgeBounds(sweep, edge);
    let probes = sweep.length;
    const burst = await edgeBurst(target, send, bounds, roundTripMs(sweep), startMs);
    if (burst !== null) {
      const answered = burst.probes.filter((p): p is Probe => !(p instanceof Error));
      const narrow = edgeBounds(answered, burst.edgeMs);
      if (narrow.high - narrow.low < bounds.high - bounds.low) bounds = narrow;
      probes += burst.probes.length;
    }
    if (target.signal.aborted) return { clock: null, reason: 'interrupted' };
    if (!(bounds.low < bounds.high))
      return { clock: null, reason: 'the Date headers went back in time (several servers behind one URL?)' };
    const basis = `HTTP Date header second edge, ${probes} probes of GET ${path}`;
    return { clock: offsetOf(bounds, basis, origin), reason: null };
  } finally {
    await agent.close().catch(() => undefined);
  }
}

function offsetOf(bounds: EdgeBounds, basis: string, reference: string): ClockOffset {
  const round = (ms: number): number => Math.round(ms * 1000) / 1000;
  return {
    offset_ms: round((bounds.low + bounds.high) / 2),
    uncertainty_ms: round((bounds.high - bounds.low) / 2),
    basis,
    reference,
  };
}

/** The probes answered with a `Date`, or the problem when none was answered, or none had one. */
function answeredOrProblem(probes: Array<Probe | Error>): Probe[] | string {
  const answered = probes.filter((p): p is Probe => !(p instanceof Error));
  if (answered.length === 0) {
    const first = probes.find((p): p is Error => p instanceof Error);
    return `no probe was answered (${first?.message ?? 'interrupted'})`;
  }
  const dated = answered.filter((p) => p.dateMs !== null);
  return dated.length === 0 ? 'the server sent no Date header' : dated;
}

/** The median round trip of the answered probes, ms. */
function roundTripMs(probes: Array<Probe | Error>): number {
  const trips = probes
    .filter((p): p is Probe => !(p instanceof Error))
    .map((p) => p.answeredMs - p.sentMs)
    .sort((a, b) => a - b);
  return trips[Math.floor(trips.length / 2)] ?? 0;
}

/**
 * The burst around the next server-second edge: this clock sees the edge at k − offset, within
 * (k − high, k − low]; {@link EDGE_LANES} lanes of back-to-back probes (each on a connection of its
 * own, opened first) cover that window with a round trip and {@link LATE_EDGE_MS} more on each
 * side, staggered by a fraction of the round trip. Null when it would end after the budget.
 */
async function edgeBurst(
  target: ClockProbeTarget,
  send: () => Promise<Probe | Error>,
  bounds: EdgeBounds,
  roundTripMs: number,
  startMs: number,
): Promise<{ edgeMs: number; probes: Array<Probe | Error> } | null> {
  const open = await Promise.all(Array.from({ length: EDGE_LANES }, send));
  const edgeMs = Math.ceil((epochNowMs() + 5 + bounds.high + roundTripMs) / 1000) * 1000;
  const firstMs = edgeMs - bounds.high - roundTripMs - LATE_EDGE_MS;
  const lastMs = edgeMs - bounds.low + roundTripMs + LATE_EDGE_MS;
  if (lastMs + roundTripMs - startMs > CLOCK_BUDGET_MS) return null;
  const lane = async (j: number): Promise<Array<Probe | Error>> => {
    const out: Array<Probe | Error> = [];
    await sleepUntilMs(target, firstMs + (j * roundTripMs) / EDGE_LANES);
    while (!target.signal.aborted && epochNowMs() < lastMs) out.push(await send());
    return out;
  };
  const lanes = await Promise.all(Array.from({ length: EDGE_LANES }, (_, j) => lane(j)));
  return { edgeMs, probes: [...open, ...lanes.flat()] };
}

function sleepUntilMs(target: ClockProbeTarget, atMs: number): Promise<void> {
  return target.clock.sleepUntil((atMs - performance.timeOrigin) * 1e6, target.signal);
}

/**
 * The first sweep: a probe every {@link SWEEP_SPACING_MS} ms from `startMs` until an answer shows a
 * later second than the first answer did (the edge is then between sent probes), or
 * {@link SWEEP_MAX_MS} ms; waits for every answer.
 */
async function sweepUntilEdge(
  target: ClockProbeTarget,
  send: () => Promise<Probe | Error>,
  startMs: number,
): Promise<Array<Probe | Error>> {
  const pending: Array<Promise<Probe | Error>> = [];
  let firstDateMs: number | null = null;
  let edgeSeen = false;
  const note = (p: Probe | Error): Probe | Error => {
    const date = p instanceof Error ? null : p.dateMs;
    if (date !== null) firstDateMs ??= date;
    if (date !== null && firstDateMs !== null && date > firstDateMs) edgeSeen = true;
    return p;
  };
  for (let j = 0; !edgeSeen && j * SWEEP_SPACING_MS <= SWEEP_MAX_MS; j++) {
    await sleepUntilMs(target, startMs + j * SWEEP_SPACING_MS);
    if (target.signal.aborted) break;
    pending.push(send().then(note));
  }
  return Promise.all(pending);
}
