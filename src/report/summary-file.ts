/**
 * Reading `profile_export_aiperf.json` back into a {@link RunSummary}. Unknown keys are ignored;
 * metric entries are the top-level objects that carry a `unit` and a numeric `avg`.
 */
import type { PerTurnSection } from '../metrics/per-turn.js';
import type { StartUpSection } from '../metrics/start-up.js';
import type { UsageCheckSummary } from '../metrics/usage-check.js';
import type { TokenizerSection } from '../prompt/tokenizer-source.js';
import { isObject, type Json, numberOrNull, stringOrNull } from './json-read.js';
import { serverVerdictOf, steadyStateOf, tailsOf } from './summary-analysis.js';
import type { ConnectionsFacts, ErrorSummaryRow, RunSummary, SummaryMetric } from './types.js';

function isMetric(value: unknown): value is SummaryMetric {
  return isObject(value) && typeof value.unit === 'string' && typeof value.avg === 'number';
}

function errorRows(value: unknown): ErrorSummaryRow[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((e) => ({
    code: typeof e.code === 'number' ? e.code : 0,
    type: typeof e.type === 'string' ? e.type : '',
    message: typeof e.message === 'string' ? e.message : '',
    count: typeof e.count === 'number' ? e.count : 0,
  }));
}

/** The numeric (or null) fields of a section object; null when it is not an object. */
function numbersOf(value: unknown): Record<string, number | null> | null {
  if (!isObject(value)) return null;
  const out: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(value)) if (typeof v === 'number' || v === null) out[k] = v;
  return out;
}

function loadOf(value: unknown): RunSummary['load'] {
  if (!isObject(value) || typeof value.description !== 'string') return null;
  return {
    strategy: typeof value.strategy === 'string' ? value.strategy : '',
    description: value.description,
  };
}

function healthOf(value: unknown): RunSummary['clientHealth'] {
  if (!isObject(value) || typeof value.verdict !== 'string' || typeof value.cpu_percent !== 'number')
    return null;
  const status = typeof value.status === 'string' ? value.status : '';
  return { status, verdict: value.verdict, cpu_percent: value.cpu_percent };
}

function sendLagLimitOf(health: unknown): number {
  if (!isObject(health) || !isObject(health.limits_ms)) return 0;
  const limit = health.limits_ms.send_lag_p99;
  return typeof limit === 'number' && Number.isFinite(limit) ? limit : 0;
}

function runStatusOf(value: unknown): RunSummary['runStatus'] {
  if (!isObject(value) || typeof value.status !== 'string') return null;
  return { status: value.status, reason: stringOrNull(value.reason) };
}

function usageCheckOf(value: unknown): UsageCheckSummary | null {
  if (!isObject(value) || !Array.isArray(value.per_layout) || typeof value.overhead_of !== 'string')
    return null;
  return typeof value.requests_compared === 'number' ? (value as unknown as UsageCheckSummary) : null;
}

function usageUntrustedOf(value: unknown): number {
  return isObject(value) && typeof value.usage_untrusted === 'number' ? value.usage_untrusted : 0;
}

function tokenizerOf(value: unknown): TokenizerSection | null {
  if (!isObject(value) || typeof value.source !== 'string' || typeof value.requested !== 'string')
    return null;
  return value as unknown as TokenizerSection;
}

function connectionsOf(value: unknown): ConnectionsFacts | null {
  if (!isObject(value) || !isObject(value.prewarm)) return null;
  const opened = numberOrNull(value.prewarm.opened);
  const onOpen = numberOrNull(value.requests_on_open_connections);
  const onNew = numberOrNull(value.requests_on_new_connections);
  if (opened === null || onOpen === null || onNew === null) return null;
  return {
    prewarm: {
      opened,
      failed: numberOrNull(value.prewarm.failed) ?? 0,
      basis: stringOrNull(value.prewarm.basis) ?? '',
    },
    requests_on_open_connections: onOpen,
    requests_on_new_connections: onNew,
  };
}

function startUpOf(value: unknown): StartUpSection | null {
  if (!isObject(value) || typeof value.window_s !== 'number' || !isObject(value.first)) return null;
  return value as unknown as StartUpSection;
}

/** `per_turn` when it has a cap and turn entries that each carry a turn index, a label and cache figures. */
function perTurnOf(value: unknown): PerTurnSection | null {
  if (!isObject(value) || typeof value.bucket_cap !== 'number' || !Array.isArray(value.turns)) return null;
  const ok = value.turns.every(
    (t) =>
      isObject(t) && typeof t.turn_index === 'number' && typeof t.label === 'string' && isObject(t.cache),
  );
  return ok ? (value as unknown as PerTurnSection) : null;
}

/**
 * Builds a {@link RunSummary} from the parsed summary JSON object.
 * @param json the value of `JSON.parse(file text)`; anything but an object yields an empty summary.
 */
export function parseRunSummary(json: unknown): RunSummary {
  const root: Json = isObject(json) ? json : {};
  const metrics: Record<string, SummaryMetric> = {};
  for (const [key, value] of Object.entries(root)) if (isMetric(value)) metrics[key] = value;
  return {
    metrics,
    // tokenload's flat keys: `tokenload_config` since schema 1.5 (`input_config` is then AIPerf's layout).
    inputConfig: isObject(root.tokenload_config)
      ? root.tokenload_config
      : isObject(root.input_config)
        ? root.input_config
        : null,
    startTime: stringOrNull(root.start_time),
    endTime: stringOrNull(root.end_time),
    wasCancelled: root.was_cancelled === true,
    errorSummary: errorRows(root.error_summary),
    warnings: Array.isArray(root.warnings) ? root.warnings.filter((w) => typeof w === 'string') : [],
    version: stringOrNull(root.tokenload_version) ?? stringOrNull(root.aiperf_version),
    cacheCheck: numbersOf(root.cache_check),
    load: loadOf(root.load),
    clientHealth: healthOf(root.client_health),
    sendLagLimitMs: sendLagLimitOf(root.client_health),
    runStatus: runStatusOf(root.run_status),
    usageCheck: usageCheckOf(root.usage_check),
    usageUntrusted: usageUntrustedOf(root.stream_integrity),
    tokenizer: tokenizerOf(root.tokenizer),
    connections: connectionsOf(root.connections),
    startUp: startUpOf(root.start_up),
    serverVerdict: serverVerdictOf(root.server_verdict),
    steadyState: steadyStateOf(root.steady_state),
    tailsWithFailures: tailsOf(root.tails_with_failures),
    perTurn: perTurnOf(root.per_turn),
  };
}
