/**
 * Garbage-collection pauses of this process's main thread during a phase, from Node's `gc`
 * performance entries (`perf_hooks`, one entry per collection with its duration and kind). A
 * scavenge (young generation) or a mark-compact step stops the main thread: every timestamp and
 * send due while it runs is late by up to its length, so the client-health verdict names it.
 */
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';

/** The `client_health.gc` section: main-thread collections over the phase; times in ms. */
export interface GcFigures {
  /** Collections of any kind. */
  count: number;
  /** Of which major (mark-compact) collections. */
  major_count: number;
  /** Collections per second of the phase. */
  per_second: number;
  /** Main-thread pause per second of the phase, ms (the share of wall time the thread was stopped, × 1000). */
  pause_ms_per_second: number;
  /** The longest single pause, ms (0 without a collection). */
  max_pause_ms: number;
}

/** A running watch; `stop()` returns the figures over the wall time since it started. */
export interface GcWatch {
  stop(): GcFigures;
}

/** `detail.kind` of a major collection (Node's `NODE_PERFORMANCE_GC_MAJOR`). */
const MAJOR = constants.NODE_PERFORMANCE_GC_MAJOR;

/** Starts watching collections now. */
export function startGcWatch(): GcWatch {
  let count = 0;
  let major = 0;
  let pauseMs = 0;
  let maxMs = 0;
  const add = (entries: PerformanceEntry[]): void => {
    for (const e of entries) {
      count++;
      if ((e as { detail?: { kind?: number } }).detail?.kind === MAJOR) major++;
      pauseMs += e.duration;
      maxMs = Math.max(maxMs, e.duration);
    }
  };
  const observer = new PerformanceObserver((list) => add(list.getEntries()));
  observer.observe({ entryTypes: ['gc'] });
  const t0Ms = performance.now();
  return {
    stop: () => {
      add(observer.takeRecords());
      observer.disconnect();
      const wallS = Math.max(1e-9, (performance.now() - t0Ms) / 1000);
      return {
        count,
        major_count: major,
        per_second: round3(count / wallS),
        pause_ms_per_second: round3(pauseMs / wallS),
        max_pause_ms: round3(maxMs),
      };
    },
  };
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
