/**
 * Pieces shared by the OpenAI-compatible response parsers: defensive field access (payloads are
 * untrusted JSON), in-band error extraction and `usage` capture. Nothing here throws.
 */
import { serverTimingOf } from '../record/server-timing.js';
import type { Usage } from '../record/types.js';
import type { ParsedResponse } from './types.js';

/** A JSON object as a string-keyed record, or null for anything else (arrays included). */
export function asObject(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The value if it is a string, else ''. */
export function asText(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `choices` as an array of objects; `[]` when absent, null or not an array. */
export function choicesOf(body: Record<string, unknown>): Record<string, unknown>[] {
  const choices = body.choices;
  if (!Array.isArray(choices)) return [];
  const out: Record<string, unknown>[] = [];
  for (const choice of choices) {
    const obj = asObject(choice);
    if (obj !== null) out.push(obj);
  }
  return out;
}

/** A new empty parse result. */
export function emptyParse(): ParsedResponse {
  return { text: '', reasoning: '', usage: null, finishReason: null, error: null };
}

/** The body's `usage` when it is a non-null object. */
export function usageOf(body: Record<string, unknown>): Usage | null {
  const usage = asObject(body.usage);
  return usage === null ? null : (usage as Usage);
}

/** An HTTP-like error code: a number (or numeric string) in 400–599, else null. */
export function httpLikeCode(value: unknown): number | null {
  const code = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599 ? code : null;
}

/**
 * The in-band error of a payload with a non-null top-level `error` key (AIPerf SSE error handling).
 * Message: `error.message`, else a string `error`, else the payload's `message`, else the payload
 * as JSON. Code: the payload's code when it lies in 400–599, else null (the client then uses 502).
 */
export function inBandError(body: Record<string, unknown>): ParsedResponse['error'] {
  const raw = body.error;
  if (raw === undefined || raw === null) return null;
  const error = asObject(raw);
  const message =
    asText(error?.message) || asText(raw) || asText(body.message) || JSON.stringify(body) || 'error';
  const type = asText(error?.type) || null;
  return { message, code: httpLikeCode(error?.code ?? body.code), type };
}

/** Records a choice's index and finish reason into `parsed` (for per-choice completion). */
export function noteChoice(parsed: ParsedResponse, choice: Record<string, unknown>, position: number): void {
  const finishReason = asText(choice.finish_reason) || null;
  if (finishReason !== null) parsed.finishReason = finishReason;
  const index = typeof choice.index === 'number' ? choice.index : position;
  const list = (parsed.choices ?? []) as { index: number; finishReason: string | null }[];
  list.push({ index, finishReason });
  parsed.choices = list;
}

/** Sets `parsed.serverTiming` from the body's top-level `metrics` or `timings` object, when it has one. */
export function noteServerTiming(parsed: ParsedResponse, body: Record<string, unknown>): void {
  if (body.metrics === undefined && body.timings === undefined) return;
  const timing = serverTimingOf(body.metrics, body.timings);
  if (timing !== undefined) parsed.serverTiming = timing;
}

/**
 * Adds `include_metrics: true` to a body when `--server-timing` asks for the server's per-request
 * timing (vLLM's request field; a server that does not know it ignores it), before the caller merges
 * `--extra-inputs`, which may override it.
 */
export function askServerTiming(body: Record<string, unknown>, input: { serverTiming?: boolean }): void {
  if (input.serverTiming === true) body.include_metrics = true;
}
