/**
 * Findings of the generation requests: the streamed one (streaming, role-only first chunk, usage
 * and where it rides, reasoning field, tokens per chunk), the one asking for continuous usage, the
 * tool-call request and the bad request.
 */
import { asObject, asText } from '../endpoint/parse-common.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import type { ExchangeResult } from './exchange.js';
import { statusText } from './findings-routes.js';
import { type StreamFacts, streamFacts, tokensPerChunk } from './stream-facts.js';
import type { Finding, ProbeFindings, RecordedError } from './types.js';

/** A finding the probe could not make, and why. */
export function unknown<T>(why: string): Finding<T> {
  return { value: null, text: why };
}

/** The measuring client's error of a generation answer, or null when it succeeded. */
export function recordedError(r: ExchangeResult): RecordedError | null {
  const e = r.record?.error;
  return e === null || e === undefined ? null : { kind: e.kind, code: e.code, message: e.message };
}

/** `http_status 400: message` (shortened), as the table shows a recorded error. */
export function errorText(e: RecordedError): string {
  return `${e.kind} ${e.code}: ${short(messageOf(parsed(e.message)) || e.message)}`;
}

/** The stream facts of `r` when it was answered with an event stream. */
export function factsOf(adapter: EndpointAdapter, r: ExchangeResult | null): StreamFacts | null {
  return r !== null && r.status === 200 && r.streamed ? streamFacts(adapter, r.events) : null;
}

const PLACEMENT_TEXT = {
  own_chunk_empty_choices: 'in a chunk of its own with empty choices',
  last_content_chunk: 'on the last content chunk',
  final_empty_chunk: 'on a final chunk without text (the finish_reason chunk)',
} as const;

/** Whether the adapter's stream is OpenAI chunks (chat, completions): `choices`, `[DONE]`, usage placement. */
export function openAiChunks(adapter: EndpointAdapter): boolean {
  return adapter.name === 'chat' || adapter.name === 'completions';
}

/** Streaming: an event stream, or one JSON body for a stream request. */
export function streamingFinding(
  r: ExchangeResult,
  f: StreamFacts | null,
  chunks: boolean,
): ProbeFindings['streaming'] {
  if (r.status !== 200) return unknown(`unknown: the stream request failed (${failure(r)})`);
  if (f === null)
    return {
      value: 'json_body',
      text: 'no: a stream request was answered with one JSON body (no TTFT, no ITL)',
    };
  const done = !chunks ? 'events of this API' : f.doneMarker ? 'ends with [DONE]' : 'no [DONE]';
  const error = recordedError(r);
  const broken = error === null ? '' : `; the stream failed: ${errorText(error)}`;
  return {
    value: 'event_stream',
    text: `yes: ${f.events} events, ${f.contentChunks} with text, ${done}${broken}`,
  };
}

/** What stopped a request, for a finding's text. */
export function failure(r: ExchangeResult): string {
  const e = recordedError(r);
  return e !== null ? errorText(e) : statusText(r);
}

/** Chat only: whether the first chunk carries only the role. */
export function roleFinding(f: StreamFacts | null, chat: boolean): ProbeFindings['role_only_first_chunk'] {
  if (!chat) return unknown('n/a (chat only)');
  if (f === null || f.events === 0) return unknown('unknown: no streamed chunks');
  return f.roleOnlyFirst
    ? { value: true, text: 'yes: a first chunk with the role only, before any text' }
    : { value: false, text: 'no: the first chunk already carries text' };
}

/** `usage` in the stream asked for it (include_usage), or in the JSON body that answered it. */
export function usageFinding(
  r: ExchangeResult,
  f: StreamFacts | null,
  chunks: boolean,
): ProbeFindings['usage'] {
  if (r.status !== 200) return unknown(`unknown: ${failure(r)}`);
  const usage = f === null ? (r.record?.usage ?? null) : f.finalUsage;
  const failed = recordedError(r);
  if (usage === null && failed !== null)
    return unknown(`unknown: the answer failed before any usage (${errorText(failed)})`);
  if (usage === null)
    return {
      value: { present: false, placement: null, prompt_tokens: null, completion_tokens: null },
      text: 'no usage (asked with stream_options.include_usage)',
    };
  const placement = chunks ? (f?.usagePlacement ?? null) : null;
  const counts = `prompt ${usage.prompt_tokens ?? '?'}, completion ${usage.completion_tokens ?? '?'}`;
  const where =
    placement !== null ? PLACEMENT_TEXT[placement] : f === null ? 'in the JSON body' : 'in the stream';
  const every = f !== null && f.usageEvents > 1 ? `; unasked, on ${f.usageEvents} chunks` : '';
  return {
    value: {
      present: true,
      placement,
      prompt_tokens: usage.prompt_tokens ?? null,
      completion_tokens: usage.completion_tokens ?? null,
    },
    text: `yes, ${where} (${counts})${every}`,
  };
}

/** `stream_options.continuous_usage_stats`: running usage on every content chunk? */
export function continuousFinding(
  r: ExchangeResult | null,
  f: StreamFacts | null,
  plainOk: boolean,
): ProbeFindings['continuous_usage'] {
  if (r === null) return unknown('n/a for this endpoint type');
  if (r.status !== 200)
    return plainOk
      ? { value: 'rejected', text: `rejected: ${failure(r)}` }
      : unknown(`unknown: ${failure(r)}`);
  if (f === null) return unknown('unknown: not answered with an event stream');
  const running = f.runningCompletionTokens.length;
  const failed = recordedError(r);
  if (running === 0 && failed !== null) return unknown(`unknown: the stream failed (${errorText(failed)})`);
  if (running === 0)
    return { value: 'ignored', text: 'no: asked with continuous_usage_stats, no running usage came' };
  const all =
    running === f.contentChunks ? 'every content chunk' : `${running} of ${f.contentChunks} content chunks`;
  return { value: 'running', text: `yes: running usage on ${all}` };
}

/** The reasoning field of the deltas, from the streamed answer (chat only). */
export function reasoningFinding(
  r: ExchangeResult,
  f: StreamFacts | null,
  chat: boolean,
  maxTokens: number,
): ProbeFindings['reasoning_field'] {
  if (!chat) return unknown('n/a (chat only)');
  if (f === null) return unknown('unknown: no streamed chunks');
  const failed = recordedError(r);
  if (f.reasoningField === null && failed !== null)
    return unknown(`unknown: the stream failed (${errorText(failed)})`);
  if (f.reasoningField === null)
    return {
      value: 'none',
      text: `none in ${maxTokens} tokens (a reasoning model may need a larger --max-tokens)`,
    };
  return { value: f.reasoningField, text: `delta.${f.reasoningField}` };
}

/** Tokens per content chunk: the continuous-usage answer's running counts, else the final usage. */
export function tokensFinding(
  streamed: StreamFacts | null,
  continuous: StreamFacts | null,
): ProbeFindings['tokens_per_chunk'] {
  const t =
    (continuous === null ? null : tokensPerChunk(continuous)) ?? (streamed && tokensPerChunk(streamed));
  if (t === null) return unknown('unknown: no usage to count chunks by');
  if (t.source === 'running_usage') {
    const avg = Number.isInteger(t.avg) ? `${t.avg}` : t.avg.toFixed(2);
    return { value: t, text: `${avg} on average, at most ${t.max} (each chunk's running usage)` };
  }
  return { value: t, text: `about ${t.avg.toFixed(2)} (completion tokens over content chunks)` };
}

/** The tool-call request: tool-call deltas over several chunks, one, or none. */
export function toolsFinding(
  r: ExchangeResult | null,
  adapter: EndpointAdapter,
  plainOk: boolean,
): ProbeFindings['tool_call_streaming'] {
  if (r === null) return unknown('n/a (chat only)');
  if (r.status !== 200)
    return plainOk
      ? { value: 'rejected', text: `rejected: ${failure(r)}` }
      : unknown(`unknown: ${failure(r)}`);
  const f = factsOf(adapter, r);
  if (f === null) return unknown('unknown: not answered with an event stream');
  const failed = recordedError(r);
  if (f.toolCallChunks === 0 && failed !== null)
    return unknown(`unknown: the stream failed (${errorText(failed)})`);
  if (f.toolCallChunks === 0)
    return { value: 'not_called', text: 'no tool call: a request naming a tool was answered with text' };
  if (f.toolCallChunks === 1) return { value: 'one_chunk', text: 'yes, the whole call in one chunk' };
  return { value: 'incremental', text: `yes, tool-call deltas over ${f.toolCallChunks} chunks` };
}

/** The shape of an error payload, e.g. `{"error": {message, type, code}}`. */
function shapeOf(payload: unknown): string {
  const body = asObject(payload);
  if (body === null) return 'not JSON';
  const inner = asObject(body.error);
  if (inner !== null) return `{"error": {${Object.keys(inner).join(', ')}}}`;
  if (body.object === 'error')
    return `{"object": "error", ${Object.keys(body)
      .filter((k) => k !== 'object')
      .join(', ')}}`;
  if (body.detail !== undefined) return '{"detail": …}';
  return `{${Object.keys(body).join(', ')}}`;
}

/** The error message a payload carries (`error.message`, `message`, or a string `detail`). */
function messageOf(payload: unknown): string {
  const body = asObject(payload);
  if (body === null) return typeof payload === 'string' ? payload : '';
  const inner = asObject(body.error);
  return asText(inner?.message) || asText(body.error) || asText(body.message) || asText(body.detail);
}

function short(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return one.length > 120 ? `${one.slice(0, 117)}…` : one;
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** What the probe's bad request gets wrong: max tokens 0 (streamed); for embeddings an empty input list. */
export function badRequestOf(adapter: EndpointAdapter): string {
  return adapter.name === 'embeddings' ? 'an empty input list' : 'max tokens 0';
}

/** How the bad request ({@link badRequestOf}) is answered, and how a run records it. */
export function errorFormatFinding(
  r: ExchangeResult | null,
  adapter: EndpointAdapter,
): ProbeFindings['error_format'] {
  if (r === null) return unknown('not sent');
  const recorded = recordedError(r);
  if (r.status === null) return unknown(`unknown: ${failure(r)}`);
  const f = factsOf(adapter, r);
  const inBand = r.status === 200 && f?.errorEvent === true;
  const payload = inBand
    ? r.events.find((e) => asObject(e.json)?.error !== undefined || e.event === 'error')?.json
    : parsed(r.text);
  const shape = r.status === 200 && !inBand ? 'no error' : shapeOf(payload);
  const request = badRequestOf(adapter);
  const value = { request, status: r.status, in_band: inBand, shape, recorded_as: recorded };
  if (recorded === null)
    return { value, text: `accepted (HTTP ${r.status}): a request with ${request} got no error` };
  const how = inBand ? 'HTTP 200, then an error in the stream' : `HTTP ${r.status}`;
  const said = messageOf(payload);
  return {
    value,
    text: `${how}, ${shape}${said === '' ? '' : `: "${short(said)}"`}; a run records ${recorded.kind} ${recorded.code}`,
  };
}
