/**
 * The console's latency-from-the-schedule rows and their one-line reason. The from-schedule metrics
 * (`time_to_first_token_from_schedule`, `request_latency_from_schedule`) are hidden from the table
 * unless they differ materially from the usual ones (measured from the request start): their p50 or
 * p99 is more than {@link MATERIAL_PCT} % and more than {@link MATERIAL_MS} ms above it, and more
 * than the client-health send-lag limit (this machine's wake-up floor + 2 ms: lateness below it is
 * what the client verdict calls ok, and the line would contradict it). Then a line
 * under the table names the dominant cause: of the waits between the schedule and the request start
 * (`concurrency_wait`, `prefill_wait`, `client_lag`, which sum to that gap), the one with the largest
 * mean.
 */
import { formatConsoleNumber } from './format.js';

/** A from-schedule statistic differs materially when it exceeds the usual one by more than this %… */
export const MATERIAL_PCT = 10;
/** …and by more than this many ms. */
export const MATERIAL_MS = 1;

/** Each from-schedule metric and the usual metric it is compared with. */
const PAIRS = [
  ['time_to_first_token_from_schedule', 'time_to_first_token'],
  ['request_latency_from_schedule', 'request_latency'],
] as const;

/** The waits between the scheduled time and the request start, and what the line says of each. */
const CAUSES = [
  ['concurrency_wait', (cap: string) => `the concurrency cap${cap} queued requests`],
  ['prefill_wait', () => 'the prefill gate queued requests'],
  ['client_lag', () => 'the client sent late'],
] as const;

/**
 * A metric's figures as the rule reads them: a run's summary (metrics/summary.ts) or the summary JSON
 * read back (the HTML report). Statistics are present only on a per-request metric.
 */
export interface ScheduleFigures {
  avg: number;
  p50?: number;
  p99?: number;
  count?: number;
}

/** The metrics the rule reads, by tag. */
export type ScheduleMetrics = Readonly<Record<string, ScheduleFigures | undefined>>;

function stats(metrics: ScheduleMetrics, tag: string): { avg: number; p50: number; p99: number } | null {
  const m = metrics[tag];
  if (m === undefined || m.count === undefined || m.p50 === undefined || m.p99 === undefined) return null;
  return { avg: m.avg, p50: m.p50, p99: m.p99 };
}

function exceeds(fromScheduleMs: number, usualMs: number, floorMs: number): boolean {
  const gapMs = fromScheduleMs - usualMs;
  return gapMs > Math.max(MATERIAL_MS, floorMs) && gapMs > (Math.abs(usualMs) * MATERIAL_PCT) / 100;
}

/**
 * The from-schedule tags the console (and the HTML report's table) shows: those whose p50 or p99
 * differs materially from the usual one's. `floorMs`: the client-health send-lag limit, ms (0 when
 * the run has none).
 */
export function fromScheduleRowsShown(metrics: ScheduleMetrics, floorMs = 0): ReadonlySet<string> {
  const shown = new Set<string>();
  for (const [tag, usualTag] of PAIRS) {
    const m = stats(metrics, tag);
    const usual = stats(metrics, usualTag);
    if (m === null || usual === null) continue;
    if (exceeds(m.p50, usual.p50, floorMs) || exceeds(m.p99, usual.p99, floorMs)) shown.add(tag);
  }
  return shown;
}

/**
 * The line under the table when a from-schedule row is shown, e.g. `Latency from the schedule is
 * higher: the concurrency cap (1) queued requests (concurrency_wait p99 1,234.00 ms)`; null otherwise.
 * `concurrency` is the run's cap, named when given; `floorMs` as for {@link fromScheduleRowsShown}.
 */
export function fromScheduleLine(metrics: ScheduleMetrics, concurrency?: number, floorMs = 0): string | null {
  if (fromScheduleRowsShown(metrics, floorMs).size === 0) return null;
  let best: { tag: string; avg: number; p99: number; text: string } | null = null;
  for (const [tag, text] of CAUSES) {
    const m = stats(metrics, tag);
    if (m === null || (best !== null && m.avg <= best.avg)) continue;
    best = { tag, avg: m.avg, p99: m.p99, text: text(concurrency === undefined ? '' : ` (${concurrency})`) };
  }
  if (best === null) return null;
  return `Latency from the schedule is higher: ${best.text} (${best.tag} p99 ${formatConsoleNumber(best.p99)} ms)`;
}
