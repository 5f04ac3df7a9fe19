/**
 * The simulator's own timing of one request, in the shape a real server sends it (the
 * `serverTiming` option): vLLM's per-request `metrics` object or llama.cpp's `timings` object, with
 * values from the simulator's model, the same instants its ground-truth log records: when the
 * scheduler got the request (`queued`), admitted it (`admitted`: its prefill starts), emitted its
 * first token and its last one. A client joining these to its own TTFT is then checked against a
 * known truth.
 */
import type { SimulatorOptions } from './options.js';

/** The instants and counts one response's timing is made of (monotonic ns of this process). */
export interface TimingFacts {
  queuedNs: number | null;
  admittedNs: number | null;
  firstTokenNs: number | null;
  lastTokenNs: number | null;
  promptTokens: number;
  cachedTokens: number;
  /** Output tokens generated. */
  outputTokens: number;
}

/** {@link TimingFacts} with every instant known. */
type KnownFacts = { [K in keyof TimingFacts]: NonNullable<TimingFacts[K]> };

const msBetween = (fromNs: number, toNs: number): number => (toNs - fromNs) / 1e6;

/**
 * vLLM's `metrics`: `queue_time_ms` (queued → admitted), `time_to_first_token_ms` (admitted → first
 * token: vLLM counts its TTFT from scheduling), `generation_time_ms` (first → last token),
 * `mean_itl_ms` (null below two tokens), `tokens_per_second` (tokens over admitted → last token).
 */
function vllmMetrics(f: KnownFacts) {
  const generationMs = msBetween(f.firstTokenNs, f.lastTokenNs);
  const inferenceMs = msBetween(f.admittedNs, f.lastTokenNs);
  return {
    time_to_first_token_ms: msBetween(f.admittedNs, f.firstTokenNs),
    generation_time_ms: generationMs,
    queue_time_ms: msBetween(f.queuedNs, f.admittedNs),
    mean_itl_ms: f.outputTokens > 1 ? generationMs / (f.outputTokens - 1) : null,
    tokens_per_second: inferenceMs > 0 ? (f.outputTokens * 1000) / inferenceMs : null,
  };
}

/**
 * llama.cpp's `timings`: `cache_n` (cached prompt tokens), `prompt_n` (prompt tokens evaluated),
 * `prompt_ms` (admitted → first token: the prompt's evaluation), `predicted_n` and `predicted_ms`
 * (first → last token), with their per-token and per-second rates.
 */
function llamacppTimings(f: KnownFacts) {
  const promptN = f.promptTokens - f.cachedTokens;
  const promptMs = msBetween(f.admittedNs, f.firstTokenNs);
  const predictedMs = msBetween(f.firstTokenNs, f.lastTokenNs);
  return {
    cache_n: f.cachedTokens,
    prompt_n: promptN,
    prompt_ms: promptMs,
    prompt_per_token_ms: promptN > 0 ? promptMs / promptN : 0,
    prompt_per_second: promptMs > 0 ? (promptN * 1000) / promptMs : 0,
    predicted_n: f.outputTokens,
    predicted_ms: predictedMs,
    predicted_per_token_ms: f.outputTokens > 0 ? predictedMs / f.outputTokens : 0,
    predicted_per_second: predictedMs > 0 ? (f.outputTokens * 1000) / predictedMs : 0,
  };
}

/**
 * The top-level fields to add to a response's final usage chunk or body: `{metrics}` (vLLM),
 * `{timings}` (llama.cpp), or null when the option is `none` or the request produced no token.
 */
export function serverTimingFields(
  kind: SimulatorOptions['serverTiming'],
  facts: TimingFacts,
): Record<string, unknown> | null {
  const { queuedNs, admittedNs, firstTokenNs, lastTokenNs } = facts;
  if (kind === 'none' || queuedNs === null || admittedNs === null) return null;
  if (firstTokenNs === null || lastTokenNs === null) return null;
  const known = { ...facts, queuedNs, admittedNs, firstTokenNs, lastTokenNs };
  return kind === 'vllm' ? { metrics: vllmMetrics(known) } : { timings: llamacppTimings(known) };
}
