/**
 * Shapes the report stage works on: one finished run read back from its artifact directory, as
 * per-request points on a relative time axis plus the run summary.
 */
import { TokenloadError } from '../errors.js';
import type { PerTurnSection } from '../metrics/per-turn.js';
import type { StartUpSection } from '../metrics/start-up.js';
import type { UsageCheckSummary } from '../metrics/usage-check.js';
import type { TokenizerSection } from '../prompt/tokenizer-source.js';
import type { GpuTelemetrySection } from '../server-metrics/gpu-exports.js';
import type { ServerMetricsSection } from '../server-metrics/section.js';
import type { ServerVerdict, SlicePoint, SteadyState, TailsWithFailures } from './analysis-types.js';
import type { SampledValues } from './value-sample.js';

/** A failed request's error, as written in `profile_export.jsonl`. */
export interface RequestError {
  code: number;
  type: string;
  message: string;
  /** tokenload's failure class (`http`, `timeout`, …); '' when absent. */
  kind: string;
}

/**
 * One request of a run. Times are seconds relative to the run's first `request_start_ns`
 * ({@link RunData.t0Ns}); metric values are in their display units (ms, tokens). A metric the record
 * does not carry is undefined.
 */
export interface RequestPoint {
  sessionNum: number;
  conversationId: string;
  turnIndex: number;
  requestType: string | null;
  /** Scheduled send time, s; null when the load had no schedule. */
  scheduledS: number | null;
  startS: number;
  /** Response headers arrived, s; null when unknown. */
  ackS: number | null;
  endS: number;
  cancelled: boolean;
  error: RequestError | null;
  ttftMs?: number | undefined;
  itlMs?: number | undefined;
  latencyMs?: number | undefined;
  isl?: number | undefined;
  osl?: number | undefined;
  scheduleLagMs?: number | undefined;
  /** On the wire − request start, ms (the connection's part of the schedule lag). */
  connectionWaitMs?: number | undefined;
  cachedTokens?: number | undefined;
  /** Prompt tokens an ideal prefix cache would have held (`ideal_cached_tokens`). */
  idealCachedTokens?: number | undefined;
}

/** A metric's summary entry as written in `profile_export_aiperf.json` (stats keys only for per-record metrics). */
export interface SummaryMetric {
  unit: string;
  avg: number;
  min?: number;
  max?: number;
  p1?: number;
  p5?: number;
  p10?: number;
  p25?: number;
  p50?: number;
  p75?: number;
  p90?: number;
  p95?: number;
  p99?: number;
  std?: number;
  count?: number;
}

/** One `error_summary` entry of the summary JSON. */
export interface ErrorSummaryRow {
  code: number;
  type: string;
  message: string;
  count: number;
}

/** The parts of `profile_export_aiperf.json` the report uses; all optional because older or partial files exist. */
export interface RunSummary {
  metrics: Record<string, SummaryMetric>;
  inputConfig: Record<string, unknown> | null;
  startTime: string | null;
  endTime: string | null;
  wasCancelled: boolean;
  errorSummary: ErrorSummaryRow[];
  warnings: string[];
  version: string | null;
  /** The `cache_check` section (ideal vs reported prefix-cache hits), numbers by key; null when absent. */
  cacheCheck: Record<string, number | null> | null;
  /** The `load` section: the strategy's name and its one-line description; null when absent. */
  load: { strategy: string; description: string } | null;
  /** The `client_health` verdict (status, one-line verdict, CPU % of one core); null when absent. */
  clientHealth: { status: string; verdict: string; cpu_percent: number } | null;
  /**
   * `client_health.limits_ms.send_lag_p99`, ms (0 when absent): the lateness the console's
   * latency-from-the-schedule rows must exceed to be shown (export/from-schedule.ts).
   */
  sendLagLimitMs: number;
  /** `run_status`: how the run ended (`completed`, `failed`, `interrupted`) and why; null when absent. */
  runStatus: { status: string; reason: string | null } | null;
  /** `usage_check`: the client's prompt counts against the server's `usage.prompt_tokens`; null when absent. */
  usageCheck: UsageCheckSummary | null;
  /** `stream_integrity.usage_untrusted`: requests whose usage contradicted their stream (0 when absent). */
  usageUntrusted: number;
  /** `tokenizer`: which tokenizer counted the tokens; null when absent. */
  tokenizer: TokenizerSection | null;
  /** `connections`: connections pre-opened and requests that waited for a new one; null when absent. */
  connections: ConnectionsFacts | null;
  /** `start_up`: the first seconds of the run against the rest; null when absent. */
  startUp: StartUpSection | null;
  /** `server_verdict`; null when absent. */
  serverVerdict: ServerVerdict | null;
  /** `steady_state`; null when absent. */
  steadyState: SteadyState | null;
  /** `tails_with_failures`; null when absent. */
  tailsWithFailures: TailsWithFailures | null;
  /** `per_turn`: the run's requests by turn index (metrics/per-turn.ts); null when absent (single-turn runs). */
  perTurn: PerTurnSection | null;
}

/** The summary's `connections` section, as the report reads it. */
export interface ConnectionsFacts {
  /** Connections opened before the first request, how many failed, and why that many. */
  prewarm: { opened: number; failed: number; basis: string };
  /** Requests sent on a connection that was already open. */
  requests_on_open_connections: number;
  /** Requests that waited for a new connection to be opened. */
  requests_on_new_connections: number;
}

/** What the time bins read of a request (a {@link RequestPoint} has it). */
export type BinPoint = Pick<RequestPoint, 'startS' | 'endS' | 'ttftMs' | 'osl'> & {
  error: { type: string } | null;
};

/** Every request of a run as {@link BinPoint}s, with their counts (report/timeline.ts). */
export interface EveryRequest extends Iterable<BinPoint> {
  /** Requests. */
  readonly count: number;
  /** Of them, failed (cancelled included). */
  readonly failed: number;
}

/** A run read back from its artifact directory. */
export interface RunData {
  /** The artifact directory, as given. */
  dir: string;
  /**
   * Requests in file order (completion order): every one, or in a run of more than
   * `REPORT_REQUEST_CAP` (load-run.ts) an evenly spaced sample of them (`timeline.count` says how
   * many there were).
   */
  requests: RequestPoint[];
  /**
   * Every request's timing (timeline.ts), for the time bins, the span and the counts, exact however
   * many requests; absent (a run built by hand): `requests` is every request.
   */
  timeline?: EveryRequest;
  /** Earliest `request_start_ns` (epoch ns, exact); 0n when there are no requests. */
  t0Ns: bigint;
  /** The summary JSON, or null when the file is missing. */
  summary: RunSummary | null;
  /** Server metrics (`server_metrics_export.jsonl` and the summary's section); null or absent without them. */
  server?: ServerRunData | null;
  /** GPU telemetry (`gpu_telemetry_export.jsonl`, `--gpu-telemetry`); null or absent without it. */
  gpu?: GpuRunData | null;
  /**
   * Inter-chunk latencies (ms) of every record's `inter_chunk_latency` list, one per chunk gap:
   * a bounded deterministic sample (value-sample.ts) and how many there were.
   */
  interChunkLatencyMs: SampledValues;
  /** The time slices (`profile_export_aiperf_timeslices.json`, `--slice-duration`); empty without the file. */
  slices?: SlicePoint[] | undefined;
}

export type { ServerVerdict, SlicePoint, SteadyState, TailsWithFailures } from './analysis-types.js';

/** An artifact directory that cannot be read: missing files or malformed lines (message names the file). */
export class RunLoadError extends TokenloadError {
  override readonly name = 'RunLoadError';
  constructor(
    message: string,
    readonly file: string,
  ) {
    super('E_ARTIFACTS', message);
  }
}

/** `[time s, value]` pairs in time order. */
export type TimePoints = Array<[number, number]>;

/** One endpoint's series for the charts. */
export interface EndpointSeries {
  url: string;
  /** Gauges by known-series key (`running_requests`, `kv_cache_usage`, …), as scraped. */
  gauges: Record<string, TimePoints>;
  /** Counters by key, as per-second rates between consecutive scrapes. */
  rates: Record<string, TimePoints>;
  /** Prefix-cache hit rate (0–1) between consecutive scrapes that queried anything. */
  hitRate: TimePoints;
}

/** One GPU's DCGM gauges over time, for the report. */
export interface GpuSeries {
  /** `GPU 0`, with the exporter's host when the run scraped several. */
  label: string;
  /** Gauges by DCGM field key (`nvidia_gpu_utilization`, …), in the field's unit, as scraped. */
  gauges: Record<string, TimePoints>;
}

/** The GPU telemetry of a run, for the report. */
export interface GpuRunData {
  gpus: GpuSeries[];
  /** The summary's `gpu_telemetry` section; null when the summary has none. */
  section: GpuTelemetrySection | null;
}

/** The server metrics of a run, for the report. */
export interface ServerRunData {
  endpoints: EndpointSeries[];
  /** The summary's `server_metrics` section; null when the summary has none. */
  section: ServerMetricsSection | null;
}
