/**
 * Folds processed records into the {@link RunTotals} the aggregate and derived metrics need.
 */
import type { LineRecord } from '../record/types.js';
import { meetsSlos, type Slo } from './goodput.js';
import type { RunTotals } from './types.js';

/** Empty totals; `goodCount` is 0 when SLOs are given, null otherwise. */
export function emptyTotals(hasSlos: boolean): RunTotals {
  return {
    validCount: 0,
    errorCount: 0,
    cancelledCount: 0,
    totalIsl: 0,
    totalOsl: 0,
    totalErrorIsl: 0,
    usageDiscrepancyCount: 0,
    oslMismatchCount: 0,
    oslShortCount: 0,
    oslLongCount: 0,
    lengthWithoutOutputCount: 0,
    itlPerChunkFallbackCount: 0,
    serverTtftAboveClientCount: 0,
    serverTimingInvalidCount: 0,
    serverTimingInvalidExample: null,
    goodCount: hasSlos ? 0 : null,
    minStartNs: null,
    maxResponseNs: null,
  };
}

/** Whether |OSL − requested| > min(5 % · requested, 50 tokens) (AIPerf OSL mismatch rule). */
export function isOslMismatch(osl: number, requested: number): boolean {
  return Math.abs(osl - requested) > Math.min(0.05 * requested, 50);
}

function num(value: number | number[] | undefined): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

/** Response timestamp of a record (monotonic ns): start + request latency, else its end. */
export function responseNs(record: LineRecord): number {
  const latencyMs = num(record.metrics.request_latency);
  return latencyMs === undefined ? record.raw.endNs : record.raw.startNs + latencyMs * 1e6;
}

function addWindow(t: RunTotals, record: LineRecord): void {
  const end = responseNs(record);
  t.minStartNs = t.minStartNs === null ? record.raw.startNs : Math.min(t.minStartNs, record.raw.startNs);
  t.maxResponseNs = t.maxResponseNs === null ? end : Math.max(t.maxResponseNs, end);
}

/**
 * Counts an OSL off the requested max tokens by direction: shorter (stopped at EOS), or longer by the
 * server's own count (max tokens ignored). Longer by a client count (tokenizer re-count of the text,
 * or content chunks) is no evidence: re-tokenizing text does not give back the server's tokens.
 */
function addOslMismatch(t: RunTotals, record: LineRecord, osl: number | undefined): void {
  const requested = record.raw.requestedOutputTokens;
  if (osl === undefined || requested === null || requested <= 0 || !isOslMismatch(osl, requested)) return;
  if (osl < requested) t.oslShortCount++;
  else if (record.oslSource === 'server_usage') t.oslLongCount++;
  else return;
  t.oslMismatchCount++;
}

function addValid(t: RunTotals, record: LineRecord, slos: readonly Slo[] | null): void {
  const m = record.metrics;
  t.validCount++;
  t.totalIsl += num(m.input_sequence_length) ?? 0;
  const osl = num(m.output_sequence_length);
  t.totalOsl += osl ?? 0;
  addOslMismatch(t, record, osl);
  if (slos !== null && t.goodCount !== null && meetsSlos(m, slos)) t.goodCount++;
  if (record.itlPerChunkFallback === true) t.itlPerChunkFallbackCount++;
  if (
    m.server_ttft_ms !== undefined &&
    m.time_to_first_token !== undefined &&
    m.client_overhead_ms === undefined
  )
    t.serverTtftAboveClientCount++;
  const invalid = record.serverTimingInvalid;
  if (invalid !== undefined) {
    t.serverTimingInvalidCount++;
    t.serverTimingInvalidExample ??= invalid[0] ?? null;
  }
  // A reasoning model cut by max_tokens before any visible answer: valid, but worth a warning.
  if (
    record.raw.finishReason === 'length' &&
    m.time_to_first_output_token === undefined &&
    m.time_to_first_token !== undefined
  ) {
    t.lengthWithoutOutputCount++;
  }
}

/**
 * Adds one record to `t` in place. Token sums, goodput and the benchmark window use valid records
 * (AIPerf: the window is min request start → max response of the records that have a latency).
 */
export function addToTotals(t: RunTotals, record: LineRecord, slos: readonly Slo[] | null): void {
  if (record.valid) {
    addWindow(t, record);
    addValid(t, record, slos);
    return;
  }
  t.errorCount++;
  if (record.raw.cancelled || record.raw.error?.kind === 'cancelled') t.cancelledCount++;
  t.totalErrorIsl += num(record.metrics.error_isl) ?? 0;
}
