/**
 * The server's own timing of one request, when its answer carries one, mapped onto tokenload's
 * record names. Kept beside the client's measurements, never in their place: nothing here starts or
 * replaces TTFT (FORMAT.md §6.1, "Unknown keys are ignored").
 *
 * Two shapes are known:
 * - vLLM's `metrics` object (per-request metrics, served with `--enable-per-request-metrics`; on a
 *   stream it rides on the final usage chunk): `time_to_first_token_ms` (from the request's
 *   scheduling to its first token, so without the queue), `queue_time_ms`, `generation_time_ms` (first
 *   to last output token), `mean_itl_ms`;
 * - llama.cpp's `timings` object (llama-server, on the final chunk or body): `prompt_ms` (the prompt's
 *   evaluation: its prefill, without any wait for a slot), `prompt_n` (prompt tokens evaluated),
 *   `cache_n` (prompt tokens reused from the cache), `predicted_ms` and `predicted_n` (generation).
 *
 * SGLang sends no per-request timing in its OpenAI-compatible answers (docs/metrics.md, "Server timing").
 */

/** Where a request's server timing came from: the answer's vLLM `metrics` or llama.cpp `timings`. */
export type ServerTimingSource = 'vllm_metrics' | 'llamacpp_timings';

/**
 * One request's server timing in tokenload's names, ms and tokens as the server reported them; a
 * field the server did not send (or sent as null) is absent, never 0.
 */
export interface ServerTiming {
  source: ServerTimingSource;
  /** The server's time to first token as it defines it (vLLM: from scheduling; llama.cpp: `prompt_ms`), ms. */
  ttftMs?: number;
  /** Time the request waited in the server's queue before it was scheduled (vLLM `queue_time_ms`), ms. */
  queueMs?: number;
  /** Prompt evaluation (prefill) time (llama.cpp `prompt_ms`), ms. */
  prefillMs?: number;
  /** Generation (decode) time (vLLM `generation_time_ms`, llama.cpp `predicted_ms`), ms. */
  decodeMs?: number;
  /** Mean gap between output tokens (vLLM `mean_itl_ms`), ms. */
  meanItlMs?: number;
  /** Prompt tokens the server reused from its cache (llama.cpp `cache_n`), tokens. */
  cachedTokens?: number;
  /**
   * The known fields the server sent with a value that is not a finite, non-negative number (a
   * negative duration, a string), as `name=value` in the server's own names: not used, and counted
   * by the run's warning; absent when every known field was usable or null.
   */
  invalid?: string[];
}

type Json = Record<string, unknown>;

function objectOf(value: unknown): Json | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : null;
}

type TimingKey = Exclude<keyof ServerTiming, 'source' | 'invalid'>;

/**
 * Sets `timing[key]` from the server's field `name` of `from` when it is a finite, non-negative
 * number; another value that is not null or absent is named in `timing.invalid`.
 */
function put(timing: ServerTiming, key: TimingKey, from: Json, name: string): void {
  const value = from[name];
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) timing[key] = value;
  else if (value !== undefined && value !== null) {
    const shown = `${name}=${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
    timing.invalid ??= [];
    if (!timing.invalid.includes(shown)) timing.invalid.push(shown);
  }
}

function vllmTiming(metrics: Json): ServerTiming {
  const timing: ServerTiming = { source: 'vllm_metrics' };
  put(timing, 'ttftMs', metrics, 'time_to_first_token_ms');
  put(timing, 'queueMs', metrics, 'queue_time_ms');
  put(timing, 'decodeMs', metrics, 'generation_time_ms');
  put(timing, 'meanItlMs', metrics, 'mean_itl_ms');
  return timing;
}

function llamacppTiming(timings: Json): ServerTiming {
  const timing: ServerTiming = { source: 'llamacpp_timings' };
  put(timing, 'ttftMs', timings, 'prompt_ms');
  put(timing, 'prefillMs', timings, 'prompt_ms');
  put(timing, 'decodeMs', timings, 'predicted_ms');
  put(timing, 'cachedTokens', timings, 'cache_n');
  return timing;
}

/**
 * The server timing of one answer object, from its top-level `metrics` (vLLM) or `timings`
 * (llama.cpp) value; `timings` wins when both are objects. Undefined when neither is an object or
 * the object holds none of the known fields (vLLM sends `{}` when its timing is unavailable).
 * Never throws.
 * @param metrics the answer's `metrics` value (anything, untrusted JSON)
 * @param timings the answer's `timings` value
 */
export function serverTimingOf(metrics: unknown, timings: unknown): ServerTiming | undefined {
  const llamacpp = objectOf(timings);
  const vllm = llamacpp === null ? objectOf(metrics) : null;
  const timing = llamacpp !== null ? llamacppTiming(llamacpp) : vllm !== null ? vllmTiming(vllm) : null;
  return timing === null || Object.keys(timing).length === 1 ? undefined : timing;
}
