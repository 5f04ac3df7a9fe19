/**
 * Which late sends were bursts. A trace can put many requests on one instant (Mooncake's timestamps
 * are in whole seconds: up to 28 prompts share one tick at 10×); the client builds and writes them
 * one after another, so the k-th of a burst is late by the work of the k − 1 before it, on a client
 * that is otherwise idle. That is lateness, not saturation, and the health verdict says so.
 *
 * A burst is a group of requests scheduled within {@link BURST_WINDOW_MS} of the group's first. A late
 * request counts as late *from its burst* when most of its lateness is waiting behind its burst:
 * its `schedule_lag` exceeds its burst's least-late request's by at least half its own. A pause that
 * delays a whole group (a GC pause, another process on the core) delays its least-late request too,
 * so it does not count. A late request that is not late from its burst counts as late *on its
 * connection* when it waited for a new connection to be opened and most of its lag was that
 * `connection_wait` (on an open connection, the wait is the client's own write path).
 *
 * A request that waited for a new connection because its last one closed while idle (a keep-alive
 * timeout, idle-closes.ts) was held up by the server's keep-alive policy: that `connection_wait` is
 * left out of its lag.
 */
import type { ProcessedRecord } from '../record/types.js';
import { type IdleClosedConnections, IdleCloseTally } from './idle-closes.js';

/** Requests scheduled within this many ms of a group's first one form one burst. */
export const BURST_WINDOW_MS = 1;

/** `client_health.late_sends`: the late requests of a scheduled run and how many were bursts. */
export interface LateSends {
  /** The lateness above which a request counts as late: the health verdict's send-lag limit, ms. */
  limit_ms: number;
  /** Requests whose `schedule_lag` exceeded `limit_ms`. */
  count: number;
  /** Of those, the ones late from their burst (most of their lag was waiting behind it). */
  in_bursts: number;
  /** Of those, the ones that waited for a new connection and spent most of their lag doing so. */
  on_connections: number;
  /** Most requests scheduled within {@link BURST_WINDOW_MS} of each other in the run. */
  largest_burst: number;
}

/** A record's wait the load asked for (`prefill_wait`, `concurrency_wait`), ms; 0 when absent. */
function queuedMs(record: ProcessedRecord, tag: 'prefill_wait' | 'concurrency_wait'): number {
  const waitMs = record.metrics[tag];
  return typeof waitMs === 'number' ? waitMs : 0;
}

/**
 * Each scheduled request's intended send time, in completion order, and the few numbers that set
 * its send lag apart from its `schedule_lag`. The `schedule_lag` values themselves are not copied:
 * the run's summary keeps every one already (its value store), and `lagsOf` reads them there at the
 * end, in the order the records were added. Deductions and connection waits are kept only for the
 * requests that have one (most have neither).
 */
export class SendLog {
  private readonly scheduledNs: number[] = [];
  /** Per request index, what its send lag leaves out of its `schedule_lag`, ms; absent when 0. */
  private readonly deductionsMs = new Map<number, number>();
  /** Per request index, its `connection_wait` when it waited for a new connection, ms; absent when 0. */
  private readonly waitsMs = new Map<number, number>();
  private readonly idleCloses = new IdleCloseTally();

  /**
   * @param lagsOf the `schedule_lag` values (ms) of the records given to {@link SendLog.add}, every
   *   one and in the same order (the summary's values of the same records: `SummaryBuilder.valuesOf`).
   */
  constructor(private readonly lagsOf: () => readonly number[]) {}

  /**
   * Adds one record; a record without a schedule or a `schedule_lag` is ignored. Its lag is its
   * `schedule_lag` less its `prefill_wait` and `concurrency_wait` (waits the load asked for — a
   * prefill gate, a session cap — not the client's lateness), and less a `connection_wait` caused by
   * an idle close (the server's keep-alive policy).
   */
  add(record: ProcessedRecord): void {
    const lagMs = record.metrics.schedule_lag;
    if (record.raw.scheduledNs === null || typeof lagMs !== 'number') return;
    const index = this.scheduledNs.length;
    this.scheduledNs.push(record.raw.scheduledNs);
    const keepAliveMs = this.idleCloses.add(record);
    const deductionMs = queuedMs(record, 'prefill_wait') + queuedMs(record, 'concurrency_wait') + keepAliveMs;
    if (deductionMs !== 0) this.deductionsMs.set(index, deductionMs);
    const waitMs = record.metrics.connection_wait;
    const opened = record.raw.connectionReused === false && keepAliveMs === 0;
    if (opened && typeof waitMs === 'number' && waitMs !== 0) this.waitsMs.set(index, waitMs);
  }

  /** The scheduled requests whose connection had closed while idle; null when none. */
  idleClosed(): IdleClosedConnections | null {
    return this.idleCloses.build();
  }

  /**
   * Every scheduled request's send lag, ms, in the order added (a new array): its `schedule_lag`
   * less any `prefill_wait`, `concurrency_wait` and wait after an idle close; what the client-health
   * verdict judges.
   * @throws {Error} when `lagsOf` does not hold one value per record added (a wiring bug).
   */
  clientLagsMs(): number[] {
    const lags = this.lagsOf();
    if (lags.length !== this.scheduledNs.length) {
      throw new Error(
        `send log: ${this.scheduledNs.length} scheduled requests but ${lags.length} schedule_lag values`,
      );
    }
    const out = Array.from(lags);
    for (const [index, deductionMs] of this.deductionsMs) out[index] = (out[index] as number) - deductionMs;
    return out;
  }

  /**
   * Late requests above `limitMs` and the bursts among them; null when no request had a schedule.
   * `lagsMs` are {@link SendLog.clientLagsMs} (given when the caller has them already).
   */
  lateSends(limitMs: number, lagsMs: readonly number[] = this.clientLagsMs()): LateSends | null {
    const n = this.scheduledNs.length;
    if (n === 0) return null;
    const order = Uint32Array.from({ length: n }, (_, i) => i).sort(
      (a, b) => (this.scheduledNs[a] as number) - (this.scheduledNs[b] as number),
    );
    const out: LateSends = { limit_ms: limitMs, count: 0, in_bursts: 0, on_connections: 0, largest_burst: 0 };
    for (let first = 0; first < n; ) {
      const end = this.groupEnd(order, first);
      this.countGroup(order.subarray(first, end), lagsMs, out);
      first = end;
    }
    return out;
  }

  /** Index in `order` just past the burst that starts at `first`. */
  private groupEnd(order: Uint32Array, first: number): number {
    const windowEndNs = (this.scheduledNs[order[first] as number] as number) + BURST_WINDOW_MS * 1e6;
    let end = first + 1;
    while (end < order.length && (this.scheduledNs[order[end] as number] as number) < windowEndNs) end++;
    return end;
  }

  private countGroup(group: Uint32Array, lagsMs: readonly number[], out: LateSends): void {
    out.largest_burst = Math.max(out.largest_burst, group.length);
    let leastLagMs = Number.POSITIVE_INFINITY;
    for (const i of group) leastLagMs = Math.min(leastLagMs, lagsMs[i] as number);
    for (const i of group) {
      const lagMs = lagsMs[i] as number;
      if (lagMs <= out.limit_ms) continue;
      out.count++;
      if (group.length > 1 && lagMs - leastLagMs >= lagMs / 2) out.in_bursts++;
      else if ((this.waitsMs.get(i) ?? 0) >= lagMs / 2) out.on_connections++;
    }
  }
}
