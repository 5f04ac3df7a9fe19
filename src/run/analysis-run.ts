/**
 * The run analysis at the end of a profiling phase: the steady-state window with its metrics and
 * Little's-law check (summary section `steady_state`), and the server verdict (`server_verdict`),
 * with their console lines and warnings. The algorithms are in metrics/analysis/; this file feeds
 * them the phase's timeline and in-flight series and reads the window's records back.
 */
import { parseSteadyState } from '../config/fields-output.js';
import type { InFlightPoint } from '../metrics/analysis/in-flight-series.js';
import { type LittlesLaw, littlesLaw } from '../metrics/analysis/littles-law.js';
import type { TimelineRequest } from '../metrics/analysis/request-timeline.js';
import { judgeServer, type ServerVerdict } from '../metrics/analysis/server-verdict.js';
import {
  firstMomentNs,
  type SteadyMethod,
  type SteadyWindow,
  steadyWindow,
} from '../metrics/analysis/steady-state.js';
import type { MetricTag } from '../metrics/registry.js';
import { isStatsSummary, type MetricSummary, type Summary, SummaryBuilder } from '../metrics/summary.js';
import { TimeBase } from '../timing/clock.js';
import type { FinishInput } from './finish-input.js';
import { readRecordsBack } from './records-readback.js';

/** `steady_state` section of the summary. */
export interface SteadyStateSection {
  /** Window bounds, epoch ns. */
  start_ns: number;
  end_ns: number;
  /** The same bounds, s from the first request start. */
  start_s: number;
  end_s: number;
  method: SteadyMethod;
  fraction_of_run: number;
  /** Requests that arrived in the window (scheduled time, else start). */
  requests: number;
  /** Why the whole run stands in for the window; null when a window was found or given. */
  fallback_reason: string | null;
  /** The metrics of the requests that arrived in the window, as the run's (rates over the window's length); absent for the whole run. */
  metrics?: Partial<Record<MetricTag, MetricSummary>>;
  /** Little's law over the window; null when it cannot be checked. */
  littles_law: LittlesLaw | null;
}

/** What the analysis adds to the summary and the console. */
export interface RunAnalysis {
  steadyState: SteadyStateSection | null;
  serverVerdict: ServerVerdict | null;
  /** Warnings for the summary (Little's law). */
  warnings: string[];
  /** Lines for the console, under the table (the server verdict's goes in its head, beside the client's). */
  lines: string[];
}

/**
 * Analyzes the profiling phase; nothing for a phase without requests.
 * @throws {RecordLineError} for a records line the run did not write (reading the window's records back).
 */
export async function analyzeRun(input: FinishInput, summary: Summary): Promise<RunAnalysis> {
  const { config, profiling } = input;
  const requests = profiling.timeline.byStart();
  const none: RunAnalysis = { steadyState: null, serverVerdict: null, warnings: [], lines: [] };
  if (requests.length === 0) return none;
  const closed = config.load.kind === 'concurrency' ? config.load.concurrency : null;
  const serverVerdict = judgeServer({
    requests,
    closedLoop: closed !== null,
    clientStatus: profiling.clientHealth?.status ?? null,
    sendLagP99Ms: profiling.clientHealth?.send_lag_ms?.p99 ?? null,
  });
  const option = parseSteadyState(config.steadyState) ?? { kind: 'auto' };
  const steady =
    option.kind === 'off'
      ? null
      : await steadySection(input, requests, profiling.inFlight, {
          requests,
          inFlight: profiling.inFlight,
          closedLoopConcurrency: closed,
          option,
          serverStatus: serverVerdict.status,
        });
  const warning = steady?.littles_law?.warning ?? null;
  return {
    steadyState: steady,
    serverVerdict,
    warnings: warning === null ? [] : [warning],
    lines: steady === null ? [] : [steadyLine(steady, summary)],
  };
}

async function steadySection(
  input: FinishInput,
  requests: readonly TimelineRequest[],
  inFlight: readonly InFlightPoint[],
  args: Parameters<typeof steadyWindow>[0],
): Promise<SteadyStateSection> {
  const w = steadyWindow(args);
  const firstNs = firstMomentNs(requests);
  const time = new TimeBase();
  return {
    start_ns: Number(time.toEpochNs(w.startNs)),
    end_ns: Number(time.toEpochNs(w.endNs)),
    start_s: round3((w.startNs - firstNs) / 1e9),
    end_s: round3((w.endNs - firstNs) / 1e9),
    method: w.method,
    fraction_of_run: round3(w.fractionOfRun),
    requests: w.requests,
    fallback_reason: w.fallbackReason,
    ...(w.method === 'whole_run' ? {} : { metrics: await windowMetrics(input, w, firstNs) }),
    littles_law: littlesLaw(
      requests,
      inFlight,
      w.startNs,
      w.endNs,
      w.method === 'whole_run' ? 'the whole run' : 'the steady window',
    ),
  };
}

/** The metrics of the records that started in the window, rates over its length (read back). */
async function windowMetrics(
  input: FinishInput,
  w: SteadyWindow,
  firstNs: number,
): Promise<Partial<Record<MetricTag, MetricSummary>>> {
  const builder = new SummaryBuilder(input.profiling.summary.options);
  const fromNs = w.startNs - firstNs;
  const toNs = w.endNs - firstNs;
  await readRecordsBack(
    { artifactDir: input.config.artifactDir, firstStartNs: firstNs, streaming: input.config.streaming },
    (record) => {
      const at = record.raw.scheduledNs ?? record.raw.startNs;
      if (at >= fromNs && at <= toNs) builder.add(record);
    },
  );
  return builder.count === 0 ? {} : builder.build({ startNs: fromNs, endNs: toNs }).metrics;
}

/** "Steady state: 2.1–58.0 s (92 % of the run, 4,120 requests; mser5): 41.2 req/s (whole run 38.0), TTFT p50 …". */
function steadyLine(s: SteadyStateSection, whole: Summary): string {
  if (s.fallback_reason !== null) return `Steady state: the whole run stands in (${s.fallback_reason})`;
  const m = s.metrics ?? {};
  const rate = (metrics: Partial<Record<MetricTag, MetricSummary>>): string =>
    metrics.request_throughput?.avg.toFixed(2) ?? 'n/a';
  const stat = (tag: MetricTag, key: 'p50' | 'p99'): string => {
    const v = m[tag];
    return v !== undefined && isStatsSummary(v) ? v[key].toFixed(1) : 'n/a';
  };
  const pair = (tag: MetricTag, name: string): string =>
    m[tag] === undefined ? '' : `, ${name} p50 ${stat(tag, 'p50')} / p99 ${stat(tag, 'p99')} ms`;
  const head = `Steady state: ${s.start_s.toFixed(1)}–${s.end_s.toFixed(1)} s (${Math.round(s.fraction_of_run * 100)} % of the run, ${s.requests.toLocaleString('en-US')} requests; ${s.method})`;
  return `${head}: ${rate(m)} req/s (whole run ${rate(whole.metrics)})${pair('time_to_first_token', 'TTFT')}${pair('request_latency', 'latency')}`;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
