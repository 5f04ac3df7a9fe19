/**
 * This process's clock against a clock every shard of a run can reach: the target server's, read
 * from the HTTP `Date` header of small `GET /v1/models` requests. `Date` has one-second resolution,
 * but the moment it changes is sharp: a response stamped with second D was made at server time in
 * [D, D + 1 s), somewhere between the request's send and its answer on this clock, so each probe
 * bounds the offset (server − local) to [D − answered, D + 1 s − sent). Probes spread over one
 * second find the edge to ~{@link SWEEP_SPACING_MS} ms; back-to-back probes around the next edge
 * narrow it to about the round trip. Every bound holds
 * whatever the timing of the probes, so the interval is never narrower than the truth allows
 * (for a server that stamps `Date` at response time: Node's http does; a server that updates its
 * `Date` late, as uvicorn every 0.1 s, reads early by that delay — the same for every shard).
 * The whole measurement takes at most about {@link CLOCK_BUDGET_MS} ms.
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
/** Length of the first sweep, ms: a second (an edge falls in it) plus room for the round trip. */
const SWEEP_SPAN_MS = 1050;
/** Lanes of back-to-back probes around the next edge: the probes are a quarter round trip apart. */
const EDGE_LANES = 4;
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

/** The offset interval [low, high) the probes allow, ms. */
class OffsetBounds {
  low = Number.NEGATIVE_INFINITY;
  high = Number.POSITIVE_INFINITY;
  probes = 0;

  add(p: Probe): void {
    if (p.dateMs === null) return;
    this.probes++;
    this.low = Math.max(this.low, p.dateMs - p.answeredMs);
    this.high = Math.min(this.high, p.dateMs + 1000 - p.sentMs);
  }
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
    const sweep = await probesAt(target, send, sweepTimes(startMs));
    const bounds = new OffsetBounds();
    const problem = addAll(bounds, sweep);
    if (problem !== null) return { clock: null, reason: problem };
    const edge = await edgeBurst(target, send, bounds, roundTripMs(sweep), startMs);
    const more = addAll(bounds, edge);
    if (more !== null) return { clock: null, reason: more };
    if (target.signal.aborted) return { clock: null, reason: 'interrupted' };
    const basis = `HTTP Date header second edge, ${bounds.probes} probes of GET ${path}`;
    return { clock: offsetOf(bounds, basis, origin), reason: null };
  } finally {
    await agent.close().catch(() => undefined);
  }
}

function offsetOf(bounds: OffsetBounds, basis: string, reference: string): ClockOffset {
  const round = (ms: number): number => Math.round(ms * 1000) / 1000;
  return {
    offset_ms: round((bounds.low + bounds.high) / 2),
    uncertainty_ms: round((bounds.high - bounds.low) / 2),
    basis,
    reference,
  };
}

/** Adds the probes' bounds; the problem when none answered with a `Date`, or the bounds disagree. */
function addAll(bounds: OffsetBounds, probes: Array<Probe | Error>): string | null {
  const answered = probes.filter((p): p is Probe => !(p instanceof Error));
  if (answered.length === 0) {
    const first = probes.find((p): p is Error => p instanceof Error);
    return `no probe was answered (${first?.message ?? 'interrupted'})`;
  }
  for (const p of answered) bounds.add(p);
  if (bounds.probes === 0) return 'the server sent no Date header';
  if (bounds.low >= bounds.high)
    return 'the Date headers disagree (several servers with different clocks behind one URL?)';
  return null;
}

/** Epoch ms of the first sweep's sends: every {@link SWEEP_SPACING_MS} ms over {@link SWEEP_SPAN_MS} ms. */
function sweepTimes(startMs: number): number[] {
  return Array.from(
    { length: Math.ceil(SWEEP_SPAN_MS / SWEEP_SPACING_MS) + 1 },
    (_, j) => startMs + j * SWEEP_SPACING_MS,
  );
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
 * own, opened first) cover that window and a round trip each side, staggered by a fraction of the
 * round trip. Nothing when it would end after the budget.
 */
async function edgeBurst(
  target: ClockProbeTarget,
  send: () => Promise<Probe | Error>,
  bounds: OffsetBounds,
  roundTripMs: number,
  startMs: number,
): Promise<Array<Probe | Error>> {
  const open = await Promise.all(Array.from({ length: EDGE_LANES }, send));
  const k = Math.ceil((epochNowMs() + 5 + bounds.high + roundTripMs) / 1000) * 1000;
  const firstMs = k - bounds.high - roundTripMs;
  const lastMs = k - bounds.low + roundTripMs;
  if (lastMs + roundTripMs - startMs > CLOCK_BUDGET_MS) return open;
  const lane = async (j: number): Promise<Array<Probe | Error>> => {
    const out: Array<Probe | Error> = [];
    await sleepUntilMs(target, firstMs + (j * roundTripMs) / EDGE_LANES);
    while (!target.signal.aborted && epochNowMs() < lastMs) out.push(await send());
    return out;
  };
  const lanes = await Promise.all(Array.from({ length: EDGE_LANES }, (_, j) => lane(j)));
  return [...open, ...lanes.flat()];
}

function sleepUntilMs(target: ClockProbeTarget, atMs: number): Promise<void> {
  return target.clock.sleepUntil((atMs - performance.timeOrigin) * 1e6, target.signal);
}

/** Sends a probe at each epoch ms time (on the run's clock) and waits for every answer. */
async function probesAt(
  target: ClockProbeTarget,
  send: () => Promise<Probe | Error>,
  timesMs: readonly number[],
): Promise<Array<Probe | Error>> {
  const pending: Array<Promise<Probe | Error>> = [];
  for (const atMs of timesMs) {
    await sleepUntilMs(target, atMs);
    if (target.signal.aborted) break;
    pending.push(send());
  }
  return Promise.all(pending);
}
