/**
 * The machine's wake-up floor: how late an otherwise idle process wakes when it sleeps to absolute
 * targets on a {@link Clock}. Whatever lateness this shows, a send scheduled on the same clock at that
 * moment cannot beat: on a virtual machine whose idle vCPUs halt, a sleeping thread waits for the host
 * to run it again, and other processes on a shared machine take turns on its cores. One
 * implementation for `npm run bench:wake` and the floor a run measures at start-up (`client_health`).
 */
import type { Clock } from './clock.js';

/** Options of {@link wakeLateness}. */
export interface WakeProbe {
  /** Number of wake-ups. */
  count: number;
  /** Gap between consecutive targets, ns. */
  spacingNs: number;
  /** Delay before the first target, ns (default one spacing). */
  leadNs?: number;
  /** Stops early (the wake-ups measured so far are returned). */
  signal?: AbortSignal;
}

/**
 * Sleeps to `count` targets `spacingNs` apart on `clock` and returns each wake-up's lateness
 * (wake-up − target), ms, in target order. Does nothing else between wake-ups.
 */
export async function wakeLateness(clock: Clock, probe: WakeProbe): Promise<Float64Array> {
  const late = new Float64Array(probe.count);
  const startNs = clock.nowNs() + (probe.leadNs ?? probe.spacingNs);
  let n = 0;
  while (n < probe.count) {
    const targetNs = startNs + n * probe.spacingNs;
    await clock.sleepUntil(targetNs, probe.signal);
    if (probe.signal?.aborted === true) break;
    late[n++] = (clock.nowNs() - targetNs) / 1e6;
  }
  return late.subarray(0, n);
}
