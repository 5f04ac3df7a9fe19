/**
 * Schedule fidelity: how late each request reached the wire, and which part of that lateness was
 * the client's and which the connection's. tokenload's own metrics: AIPerf's replay lag is relative
 * to the least-late request (which hides a constant delay) and is taken when the client begins a
 * request, so it cannot see a wait for a connection; these are absolute, and split at that point.
 *
 *   scheduled ──concurrency_wait──▶ ──client_lag──▶ ──prefill_wait──▶ request start ──connection_wait──▶ on the wire
 *   └──────────────────────────────── schedule_lag ────────────────────────────────┘
 *
 * `prefill_wait` exists only with `--prefill-concurrency`: the request waited for a prefill slot
 * (client-side queueing the load asked for), before the client began it, so TTFT does not hold it.
 *
 * `concurrency_wait` exists only with a session cap on a schedule (`--concurrency` with a rate or a
 * fixed schedule): the request's tick waited for a session slot (queueing the load asked for).
 *
 * TTFT and request latency stay AIPerf's (measured from the request start), so a connection wait is
 * part of them; `connection_wait` says how much. All four are computed for every request, failed ones
 * included: how late a request was sent does not depend on its answer, and a refused or timed-out
 * request sent late is exactly the one whose lateness matters.
 */
import type { RecordMetricDef } from '../metric-types.js';
import type { RawRecord } from '../types.js';

/** `toNs − fromNs` in ms, rounded to the ns (monotonic stamps are doubles; no float noise below 1 ns). */
const spanMs = (fromNs: number, toNs: number): number => Math.round(toNs - fromNs) / 1e6;

/** The waits the load asked for before the request start (prefill gate, concurrency cap), ns. */
const queuedNs = (raw: RawRecord): number => (raw.prefillWaitNs ?? 0) + (raw.concurrencyWaitNs ?? 0);

/**
 * Schedule Lag, ms: when the request's last byte was handed to the socket − its scheduled send time
 * (`request_sent_ns − request_scheduled_ns`). Omitted without a schedule, or when nothing was sent.
 */
export const scheduleLag: RecordMetricDef = {
  tag: 'schedule_lag',
  header: 'Schedule Lag',
  unit: 'ms',
  kind: 'record',
  flags: { everyRecord: true },
  displayOrder: 1050,
  compute: ({ raw }) =>
    raw.scheduledNs === null || raw.sentNs === null ? undefined : spanMs(raw.scheduledNs, raw.sentNs),
};

/**
 * Client Lag, ms: request start − scheduled send time − any prefill and concurrency wait
 * (`request_start_ns − request_scheduled_ns − prefill_wait − concurrency_wait`): the client's own
 * lateness (a busy event loop, a timer that woke late, a body built late). Omitted without a schedule.
 */
export const clientLag: RecordMetricDef = {
  tag: 'client_lag',
  header: 'Client Lag',
  unit: 'ms',
  kind: 'record',
  flags: { noConsole: true, everyRecord: true },
  displayOrder: 1051,
  compute: ({ raw }) =>
    raw.scheduledNs === null ? undefined : spanMs(raw.scheduledNs + queuedNs(raw), raw.startNs),
};

/**
 * Prefill Wait, ms: how long the request waited for a prefill slot (`--prefill-concurrency`) before
 * the client began it: queueing on the client, after its scheduled time and outside its TTFT.
 * Omitted without a prefill gate.
 */
export const prefillWait: RecordMetricDef = {
  tag: 'prefill_wait',
  header: 'Prefill Wait',
  unit: 'ms',
  kind: 'record',
  flags: { everyRecord: true },
  displayOrder: 1054,
  compute: ({ raw }) => (raw.prefillWaitNs === undefined ? undefined : spanMs(0, raw.prefillWaitNs)),
};

/**
 * Concurrency Wait, ms: how much of the request's lateness the session cap (`--concurrency` with a
 * request rate or a schedule) imposed: from its scheduled time to the moment a session slot freed,
 * 0 when it did not wait for one. Queueing the load asked for, before the client began the request,
 * so outside TTFT and latency and outside `client_lag`. Omitted without a cap or without a schedule.
 */
export const concurrencyWait: RecordMetricDef = {
  tag: 'concurrency_wait',
  header: 'Concurrency Wait',
  unit: 'ms',
  kind: 'record',
  flags: { noConsole: true, everyRecord: true },
  displayOrder: 1055,
  compute: ({ raw }) => (raw.concurrencyWaitNs === undefined ? undefined : spanMs(0, raw.concurrencyWaitNs)),
};

/**
 * Connection Wait, ms: on the wire − request start (`request_sent_ns − request_start_ns`): waiting
 * for a free connection in the pool, opening a new one when none was free, and the socket write.
 * Omitted when nothing was sent.
 */
export const connectionWait: RecordMetricDef = {
  tag: 'connection_wait',
  header: 'Connection Wait',
  unit: 'ms',
  kind: 'record',
  flags: { noConsole: true, everyRecord: true },
  displayOrder: 1052,
  compute: ({ raw }) => (raw.sentNs === null ? undefined : spanMs(raw.startNs, raw.sentNs)),
};

/**
 * Connect Time, ms: how long opening the new connection took (TCP, plus TLS for https), for a
 * request that waited for one; omitted for a request on a connection already open.
 */
export const connectTime: RecordMetricDef = {
  tag: 'connect_time',
  header: 'Connect Time',
  unit: 'ms',
  kind: 'record',
  flags: { noConsole: true, everyRecord: true },
  displayOrder: 1053,
  compute: ({ raw }) => (raw.connectDurationNs === null ? undefined : spanMs(0, raw.connectDurationNs)),
};
