/**
 * The join of bench/side-by-side.ts: a client's `profile_export.jsonl` against the stub server's log
 * (bench/side-by-side-stub.ts), by `x-request-id`, and the figures computed from the server's stamps.
 * All times are epoch ns on one machine; the stub's are first moved into the client's frame by the
 * measured difference of the two processes' epoch mappings (bench/side-by-side-probe.mjs).
 *
 * Definitions (ms, signed; a window is "head" when the request was scheduled less than `headSeconds`
 * after the run's first scheduled request, else "rest"; without a schedule, request_start_ns is used):
 * - arrivalLatenessMs: server body received − request_scheduled_ns (how late the request reached the server);
 * - arrivalLatenessOnFreshConnectionMs: the same, only for requests whose connection was opened for
 *   them (first request on it, accepted after the request was scheduled); its `n` counts them;
 * - startToArrivalMs: server body received − request_start_ns (connection wait, write, transfer, server read);
 * - sentToArrivalMs / clientSendLagMs: server body received − request_sent_ns and request_sent_ns −
 *   request_scheduled_ns, only when the export has `request_sent_ns`;
 * - scheduleLagMs: tokenload's own exported `schedule_lag` metric, whatever it is defined as in that build;
 * - ttftErrorMs: client TTFT − server TTFT, server TTFT = first token write − body received: what the
 *   client adds to the server's first-token time (send path + delivery of the first token);
 * - firstTokenDeliveryMs: (request_start_ns + TTFT) − first token write: the receive side alone;
 * - stubFirstWriteLatenessMs: first token write − (body received + stub TTFT): the stub's own punctuality.
 */
import { readFileSync } from 'node:fs';
import { percentileSorted } from '../src/metrics/stats.js';
import { readEpochNs } from '../src/report/epoch-ns.js';

/** The stub's stamps of one request, epoch ns in the client's frame; null where never reached. */
export interface StubEntry {
  id: string | null;
  headersReceivedNs: bigint | null;
  bodyReceivedNs: bigint | null;
  tokenWriteNs: bigint[];
  closedEarly: boolean;
  backpressuredWrites: number;
  /** When the request's connection was accepted; null when unknown. */
  connectionAcceptedNs: bigint | null;
  /** Requests that connection carried before this one (0: this request opened it). */
  connectionRequestIndex: number;
}

/** The fields of one exported record the join uses; epoch ns exact, metrics in ms. */
export interface ClientRecord {
  id: string;
  scheduledNs: bigint | null;
  startNs: bigint;
  sentNs: bigint | null;
  ttftMs: number | null;
  scheduleLagMs: number | null;
  failed: boolean;
}

/** Signed distribution of one figure, ms; only `n` when empty. */
export interface Dist {
  n: number;
  p50?: number;
  p90?: number;
  p99?: number;
  max?: number;
  min?: number;
}

/** One figure split into the head window, the rest, and the whole run; null when no request has it. */
export type Split = { head: Dist; rest: Dist; all: Dist } | null;

const bigOrNull = (text: unknown): bigint | null => (typeof text === 'string' ? BigInt(text) : null);

/** Reads the stub log, shifting every stamp by `−shiftNs` (stub offset − client offset). */
export function readStubLog(file: string, shiftNs: bigint): StubEntry[] {
  const shift = (ns: bigint | null): bigint | null => (ns === null ? null : ns - shiftNs);
  const out: StubEntry[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const e = JSON.parse(line) as Record<string, unknown>;
    const writes = Array.isArray(e.token_write_ns) ? e.token_write_ns : [];
    out.push({
      id: typeof e.x_request_id === 'string' ? e.x_request_id : null,
      headersReceivedNs: shift(bigOrNull(e.headers_received_ns)),
      bodyReceivedNs: shift(bigOrNull(e.body_received_ns)),
      tokenWriteNs: writes.map((w) => BigInt(String(w)) - shiftNs),
      closedEarly: e.closed_early === true,
      backpressuredWrites: typeof e.backpressured_writes === 'number' ? e.backpressured_writes : 0,
      connectionAcceptedNs: shift(bigOrNull(e.connection_accepted_ns)),
      connectionRequestIndex: typeof e.connection_request_index === 'number' ? e.connection_request_index : 0,
    });
  }
  return out;
}

function metricOf(metrics: unknown, tag: string): number | null {
  const entry = (metrics as Record<string, { value?: unknown } | undefined> | undefined)?.[tag];
  return typeof entry?.value === 'number' ? entry.value : null;
}

/**
 * Reads `profile_export.jsonl`: epoch ns exactly from the text, `request_sent_ns` when the build
 * exports it. @throws {Error} on a line without `request_start_ns`.
 */
export function readRecords(file: string): ClientRecord[] {
  const out: ClientRecord[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line === '') continue;
    const rec = JSON.parse(line) as { metadata: { x_request_id: string }; metrics: unknown; error: unknown };
    const startNs = readEpochNs(line, 'request_start_ns');
    if (startNs === null) throw new Error(`record without request_start_ns: ${line.slice(0, 200)}`);
    out.push({
      id: rec.metadata.x_request_id,
      scheduledNs: readEpochNs(line, 'request_scheduled_ns'),
      startNs,
      sentNs: readEpochNs(line, 'request_sent_ns'),
      ttftMs: metricOf(rec.metrics, 'time_to_first_token'),
      scheduleLagMs: metricOf(rec.metrics, 'schedule_lag'),
      failed: rec.error !== null,
    });
  }
  return out;
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** Signed p50/p90/p99/max/min (numpy-linear percentiles, as tokenload's own statistics). */
export function dist(values: number[]): Dist {
  if (values.length === 0) return { n: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number): number => round3(percentileSorted(sorted, q));
  return {
    n: sorted.length,
    p50: at(50),
    p90: at(90),
    p99: at(99),
    max: round3(sorted[sorted.length - 1] as number),
    min: round3(sorted[0] as number),
  };
}

const msBetween = (later: bigint, earlier: bigint): number => Number(later - earlier) / 1e6;

/** Values collected per window for one figure. */
class Windows {
  readonly head: number[] = [];
  readonly rest: number[] = [];

  add(inHead: boolean, value: number | null): void {
    if (value !== null) (inHead ? this.head : this.rest).push(value);
  }

  split(): Split {
    if (this.head.length + this.rest.length === 0) return null;
    return { head: dist(this.head), rest: dist(this.rest), all: dist([...this.head, ...this.rest]) };
  }
}

/** Options of {@link joinRun}. */
export interface JoinOptions {
  /** Length of the head window, s. */
  headSeconds: number;
  /** The stub's configured TTFT, ms (for its own punctuality). */
  stubTtftMs: number;
}

const FIGURES = [
  'arrivalLatenessMs',
  'arrivalLatenessOnFreshConnectionMs',
  'startToArrivalMs',
  'sentToArrivalMs',
  'clientSendLagMs',
  'scheduleLagMs',
  'ttftErrorMs',
  'firstTokenDeliveryMs',
  'stubFirstWriteLatenessMs',
] as const;
type Figure = (typeof FIGURES)[number];

/**
 * Whether the request's connection was opened for it: it is the connection's first request and the
 * server accepted the connection after the request was scheduled (a connection opened ahead of the
 * schedule is not fresh, even for its first request).
 */
function openedFor(c: ClientRecord, s: StubEntry): boolean {
  const accepted = s.connectionAcceptedNs;
  return s.connectionRequestIndex === 0 && accepted !== null && accepted >= (c.scheduledNs ?? c.startNs);
}

/** Adds one joined request to every figure it has the stamps for. */
function addJoined(
  w: Record<Figure, Windows>,
  head: boolean,
  c: ClientRecord,
  s: StubEntry,
  ttftMs: number,
): void {
  const body = s.bodyReceivedNs;
  if (body === null) return;
  const lateness = c.scheduledNs === null ? null : msBetween(body, c.scheduledNs);
  w.arrivalLatenessMs.add(head, lateness);
  if (openedFor(c, s)) w.arrivalLatenessOnFreshConnectionMs.add(head, lateness);
  w.startToArrivalMs.add(head, msBetween(body, c.startNs));
  w.sentToArrivalMs.add(head, c.sentNs === null ? null : msBetween(body, c.sentNs));
  w.clientSendLagMs.add(
    head,
    c.sentNs === null || c.scheduledNs === null ? null : msBetween(c.sentNs, c.scheduledNs),
  );
  w.scheduleLagMs.add(head, c.scheduleLagMs);
  const firstWrite = s.tokenWriteNs[0];
  if (firstWrite === undefined) return;
  w.stubFirstWriteLatenessMs.add(head, msBetween(firstWrite, body) - ttftMs);
  if (c.failed || c.ttftMs === null) return;
  w.ttftErrorMs.add(head, c.ttftMs - msBetween(firstWrite, body));
  w.firstTokenDeliveryMs.add(head, msBetween(c.startNs, firstWrite) + c.ttftMs);
}

/** Achieved request rate at the server: (n − 1) / (last − first body received), requests/s. */
function arrivalRate(stub: StubEntry[]): number | null {
  let first: bigint | null = null;
  let last: bigint | null = null;
  let n = 0;
  for (const s of stub) {
    const t = s.bodyReceivedNs;
    if (t === null) continue;
    n++;
    if (first === null || t < first) first = t;
    if (last === null || t > last) last = t;
  }
  if (first === null || last === null || n < 2 || last === first) return null;
  return round3((n - 1) / (Number(last - first) / 1e9));
}

/** Epoch ns window the server was busy with the run: first body received → last token write. */
export function serverWindowNs(stub: StubEntry[]): { firstNs: bigint; lastNs: bigint } | null {
  let firstNs: bigint | null = null;
  let lastNs: bigint | null = null;
  for (const s of stub) {
    if (s.bodyReceivedNs !== null && (firstNs === null || s.bodyReceivedNs < firstNs))
      firstNs = s.bodyReceivedNs;
    const end = s.tokenWriteNs[s.tokenWriteNs.length - 1];
    if (end !== undefined && (lastNs === null || end > lastNs)) lastNs = end;
  }
  return firstNs === null || lastNs === null ? null : { firstNs, lastNs };
}

/** Counts of the join: what matched, what did not, what failed. */
function counts(records: ClientRecord[], stub: StubEntry[], byId: Map<string, StubEntry>, joined: number) {
  const recordIds = new Set(records.map((r) => r.id));
  return {
    records: records.length,
    failedRecords: records.filter((r) => r.failed).length,
    stubRequests: stub.length,
    joined,
    unmatchedRecords: records.length - joined,
    unmatchedStubRequests: stub.filter((s) => s.id === null || !recordIds.has(s.id)).length,
    duplicateStubIds: stub.length - byId.size - stub.filter((s) => s.id === null).length,
    stubClosedEarly: stub.filter((s) => s.closedEarly).length,
    stubBackpressuredWrites: stub.reduce((sum, s) => sum + s.backpressuredWrites, 0),
  };
}

/** Joins records to stub entries by `x-request-id` and computes every figure. */
export function joinRun(records: ClientRecord[], stub: StubEntry[], options: JoinOptions) {
  const byId = new Map<string, StubEntry>();
  for (const s of stub) if (s.id !== null) byId.set(s.id, s);
  let t0: bigint | null = null;
  for (const r of records) {
    const t = r.scheduledNs ?? r.startNs;
    if (t0 === null || t < t0) t0 = t;
  }
  const w = Object.fromEntries(FIGURES.map((f) => [f, new Windows()])) as Record<Figure, Windows>;
  const headNs = BigInt(Math.round(options.headSeconds * 1e9));
  let joined = 0;
  for (const r of records) {
    const s = byId.get(r.id);
    if (s === undefined) continue;
    joined++;
    addJoined(w, (r.scheduledNs ?? r.startNs) - (t0 ?? 0n) < headNs, r, s, options.stubTtftMs);
  }
  const figures = Object.fromEntries(FIGURES.map((f) => [f, w[f].split()])) as Record<Figure, Split>;
  return {
    requests: counts(records, stub, byId, joined),
    achievedArrivalRatePerS: arrivalRate(stub),
    headSeconds: options.headSeconds,
    ...figures,
  };
}

/** What {@link joinRun} returns. */
export type SideBySideJoin = ReturnType<typeof joinRun>;
