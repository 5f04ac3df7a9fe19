/**
 * Per-record latency metrics (AIPerf metric reference, "Streaming Metrics" and "Request Latency").
 * Content chunks are the SSE events that carried text or reasoning; usage-only events and `[DONE]`
 * are not content, so none of these metrics ends at them.
 */
import type { RecordMetricDef, RecordMetricInput } from '../metric-types.js';

const NS_PER_MS = 1e6;

function firstChunkNs(input: RecordMetricInput): number | undefined {
  return input.raw.chunks[0]?.atNs;
}

function lastChunkNs(input: RecordMetricInput): number | undefined {
  return input.raw.chunks.at(-1)?.atNs;
}

function sinceStartMs(input: RecordMetricInput, atNs: number | undefined): number | undefined {
  return atNs === undefined ? undefined : (atNs - input.raw.startNs) / NS_PER_MS;
}

/** Time to First Token, ms: first content chunk − request start. AIPerf `time_to_first_token`. */
export const timeToFirstToken: RecordMetricDef = {
  tag: 'time_to_first_token',
  header: 'Time to First Token',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true },
  displayOrder: 100,
  compute: (input) => sinceStartMs(input, firstChunkNs(input)),
};

/** Time to Second Token, ms: second content chunk − first content chunk. AIPerf `time_to_second_token`. */
export const timeToSecondToken: RecordMetricDef = {
  tag: 'time_to_second_token',
  header: 'Time to Second Token',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true },
  displayOrder: 200,
  compute: ({ raw }) => {
    const [first, second] = raw.chunks;
    return first === undefined || second === undefined ? undefined : (second.atNs - first.atNs) / NS_PER_MS;
  },
};

/**
 * Time to First Output Token, ms: first chunk with non-reasoning text − request start; equals TTFT
 * for non-reasoning models. AIPerf `time_to_first_output_token`.
 */
export const timeToFirstOutputToken: RecordMetricDef = {
  tag: 'time_to_first_output_token',
  header: 'Time to First Output Token',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true },
  displayOrder: 150,
  compute: (input) => sinceStartMs(input, input.raw.chunks.find((c) => c.text !== '')?.atNs),
};

/**
 * Error Time to First Token, ms (**ours**): a failed request's first content chunk − request start,
 * for a streamed request that failed after its first token (a stream cut short, a cancellation, a
 * timeout while decoding). Only failed records get it; their TTFT was measured, so the tails section
 * (metrics/tails.ts) counts it there, while their latency counts as a failure.
 */
export const errorTimeToFirstToken: RecordMetricDef = {
  tag: 'error_time_to_first_token',
  header: 'Error Time to First Token',
  unit: 'ms',
  kind: 'record',
  flags: { errorOnly: true, streamingOnly: true, noConsole: true },
  displayOrder: 1310,
  compute: (input) => (input.streaming ? sinceStartMs(input, firstChunkNs(input)) : undefined),
};

/**
 * Request Latency, ms: last content chunk − request start. It ends at the last content chunk, not at
 * the trailing usage chunk, `[DONE]` or connection close. AIPerf `request_latency`.
 */
export const requestLatency: RecordMetricDef = {
  tag: 'request_latency',
  header: 'Request Latency',
  unit: 'ms',
  kind: 'record',
  flags: {},
  displayOrder: 300,
  compute: (input) => sinceStartMs(input, lastChunkNs(input)),
};

function sinceScheduledMs(input: RecordMetricInput, atNs: number | undefined): number | undefined {
  const scheduledNs = input.raw.scheduledNs;
  return atNs === undefined || scheduledNs === null ? undefined : (atNs - scheduledNs) / NS_PER_MS;
}

/**
 * Time to First Token from the schedule, ms: first content chunk − the request's scheduled send time
 * (`request_scheduled_ns`), so it holds every wait before the request start (the client's lateness,
 * a concurrency cap's or prefill gate's queue) as a user arriving on schedule would feel it. Omitted
 * without a schedule. tokenload's own; AIPerf's `time_to_first_token` stays measured from the start.
 */
export const timeToFirstTokenFromSchedule: RecordMetricDef = {
  tag: 'time_to_first_token_from_schedule',
  header: 'Time to First Token from Schedule',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true, noConsole: true },
  displayOrder: 101,
  compute: (input) => sinceScheduledMs(input, firstChunkNs(input)),
};

/**
 * Request Latency from the schedule, ms: last content chunk − the request's scheduled send time
 * (`request_scheduled_ns`); see {@link timeToFirstTokenFromSchedule}. Omitted without a schedule.
 * tokenload's own; AIPerf's `request_latency` stays measured from the start.
 */
export const requestLatencyFromSchedule: RecordMetricDef = {
  tag: 'request_latency_from_schedule',
  header: 'Request Latency from Schedule',
  unit: 'ms',
  kind: 'record',
  flags: { noConsole: true },
  displayOrder: 301,
  compute: (input) => sinceScheduledMs(input, lastChunkNs(input)),
};

/**
 * Number of tokens the decode phase spread over: OSL − 1 (AIPerf's definition). Only with
 * `--per-chunk-usage` (`input.perChunkUsage`), when the first content chunk's running
 * `usage.completion_tokens` k lies in (0, OSL), is it OSL − k: the first chunk then held k tokens,
 * none of them decoded after TTFT. Otherwise — no flag, or a k outside (0, OSL) — OSL − 1.
 * Undefined when OSL < 2.
 */
export function itlDivisor(input: RecordMetricInput): number | undefined {
  const osl = input.tokens.osl;
  if (osl === undefined || osl < 2) return undefined;
  const firstTokens = input.perChunkUsage ? input.raw.chunks[0]?.usageCompletionTokens : undefined;
  if (firstTokens !== undefined && firstTokens > 0 && firstTokens < osl) return osl - firstTokens;
  return osl - 1;
}

/**
 * True when `--per-chunk-usage` was asked for but the first chunk's running completion count could
 * not be used (missing, or outside (0, OSL)), so ITL fell back to OSL − 1. AIPerf warns once per run.
 */
export function itlPerChunkFallback(input: RecordMetricInput): boolean {
  const osl = input.tokens.osl;
  if (!input.perChunkUsage || osl === undefined || osl < 2) return false;
  const firstTokens = input.raw.chunks[0]?.usageCompletionTokens;
  return firstTokens === undefined || firstTokens <= 0 || firstTokens >= osl;
}

/**
 * Inter Token Latency, ms: (request latency − TTFT) / (OSL − 1), or / (OSL − k) with
 * `--per-chunk-usage` ({@link itlDivisor}). Omitted when OSL < 2. AIPerf `inter_token_latency`.
 */
export const interTokenLatency: RecordMetricDef = {
  tag: 'inter_token_latency',
  header: 'Inter Token Latency',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true },
  displayOrder: 400,
  compute: (input) => {
    const divisor = itlDivisor(input);
    const first = firstChunkNs(input);
    const last = lastChunkNs(input);
    if (divisor === undefined || first === undefined || last === undefined) return undefined;
    return (last - first) / NS_PER_MS / divisor;
  },
};

/**
 * Inter Chunk Latency, ms (list): gaps between adjacent content chunks. Omitted with fewer than two
 * chunks, or when arrival times go backwards. AIPerf `inter_chunk_latency`.
 */
export const interChunkLatency: RecordMetricDef = {
  tag: 'inter_chunk_latency',
  header: 'Inter Chunk Latency',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true, noConsole: true },
  displayOrder: 450,
  compute: ({ raw }) => {
    if (raw.chunks.length < 2) return undefined;
    const gapsMs: number[] = [];
    for (let i = 1; i < raw.chunks.length; i++) {
      const gapNs = raw.chunks[i]!.atNs - raw.chunks[i - 1]!.atNs;
      if (gapNs < 0) return undefined;
      gapsMs.push(gapNs / NS_PER_MS);
    }
    return gapsMs;
  },
};

/**
 * Output Token Throughput Per User, tokens/sec/user: 1000 / ITL in ms. Omitted when ITL is missing
 * or zero. AIPerf `output_token_throughput_per_user`.
 */
export const outputTokenThroughputPerUser: RecordMetricDef = {
  tag: 'output_token_throughput_per_user',
  header: 'Output Token Throughput Per User',
  unit: 'tokens/sec/user',
  kind: 'record',
  flags: { streamingOnly: true, largerIsBetter: true },
  displayOrder: 500,
  compute: (input) => {
    const itlMs = interTokenLatency.compute(input);
    return typeof itlMs === 'number' && itlMs > 0 ? 1000 / itlMs : undefined;
  },
};
