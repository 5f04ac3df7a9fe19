/**
 * Per-record metrics of the server's own timing (record/server-timing.ts), tokenload's: the values a
 * server reported about the request, in the names issue #28 gave them, and the client's TTFT less
 * the server's. Present only on a record whose answer carried the field; never 0-filled.
 */

import type { RecordMetricDef } from '../metric-types.js';
import type { ServerTiming } from '../server-timing.js';

type TimingField = Exclude<keyof ServerTiming, 'source' | 'invalid'>;

function serverMetric(
  tag: string,
  header: string,
  order: number,
  field: TimingField,
  unit: 'ms' | 'tokens' = 'ms',
): RecordMetricDef {
  return {
    tag,
    header,
    unit,
    kind: 'record',
    flags: { noConsole: true },
    displayOrder: order,
    compute: ({ raw }) => raw.serverTiming?.[field],
  };
}

/** Server TTFT, ms: the server's own time to first token, as it defines it (vLLM: from scheduling; llama.cpp: `prompt_ms`). */
export const serverTtft = serverMetric('server_ttft_ms', 'Server TTFT', 1500, 'ttftMs');

/** Server Queue, ms: how long the request waited in the server's queue (vLLM `queue_time_ms`). */
export const serverQueue = serverMetric('server_queue_ms', 'Server Queue', 1510, 'queueMs');

/** Server Prefill, ms: the prompt's evaluation (llama.cpp `prompt_ms`). */
export const serverPrefill = serverMetric('server_prefill_ms', 'Server Prefill', 1520, 'prefillMs');

/** Server Decode, ms: first to last output token (vLLM `generation_time_ms`, llama.cpp `predicted_ms`). */
export const serverDecode = serverMetric('server_decode_ms', 'Server Decode', 1530, 'decodeMs');

/** Server Mean ITL, ms: the server's mean gap between output tokens (vLLM `mean_itl_ms`). */
export const serverMeanItl = serverMetric('server_mean_itl_ms', 'Server Mean ITL', 1540, 'meanItlMs');

/** Server Cached Tokens, tokens: prompt tokens the server reused from its cache (llama.cpp `cache_n`). */
export const serverCachedTokens = serverMetric(
  'server_cached_tokens',
  'Server Cached Tokens',
  1550,
  'cachedTokens',
  'tokens',
);

/**
 * Client Overhead, ms: the client's TTFT − the server's TTFT (`server_ttft_ms`), for a streamed
 * request whose server reported its TTFT. What the server's TTFT leaves out: network both ways,
 * HTTP framing, the server's front end (parsing, tokenizing, detokenizing), the client's own time,
 * and whatever the server does not count in its TTFT (vLLM: the queue, `server_queue_ms`;
 * llama.cpp: any wait for a slot). The client's span holds the server's, so a server TTFT longer
 * than the client's cannot be (the server counts from a point before the request reached it, or its
 * clock runs at another rate): such a record gets no value, and the run warns with their count
 * (metrics/warnings.ts), rather than a negative overhead that would pull the percentiles down.
 */
export const clientOverhead: RecordMetricDef = {
  tag: 'client_overhead_ms',
  header: 'Client Overhead',
  unit: 'ms',
  kind: 'record',
  flags: { streamingOnly: true },
  displayOrder: 160,
  compute: ({ raw }) => {
    const serverMs = raw.serverTiming?.ttftMs;
    const first = raw.chunks[0];
    if (serverMs === undefined || first === undefined) return undefined;
    const overheadMs = (first.atNs - raw.startNs) / 1e6 - serverMs;
    return overheadMs < 0 ? undefined : overheadMs;
  },
};
