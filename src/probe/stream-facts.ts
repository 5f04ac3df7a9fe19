/**
 * What an OpenAI-compatible event stream (chat or completions chunks) shows about the server's
 * habits: a role-only first chunk, where `usage` rides and whether it runs on every chunk, the name
 * of the reasoning field, tool-call deltas, `[DONE]`. Text, reasoning, usage and finish reasons are
 * read with the endpoint's own parser (`EndpointAdapter.parse`), as a run reads them; the rest from
 * the chunk JSON (OpenAI API reference, "The chat completion chunk object").
 */
import { asObject, asText, choicesOf } from '../endpoint/parse-common.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import type { Usage } from '../record/types.js';
import type { ProbeEvent } from './exchange.js';

/**
 * The event that carried the final `usage`: a chunk of its own with empty (or no) `choices`; the last
 * chunk that carried text; or a chunk without text that carries the finish reason.
 */
export type UsagePlacement = 'own_chunk_empty_choices' | 'last_content_chunk' | 'final_empty_chunk';

/** The reasoning field names the parsers read, in the order they are tried. */
export type ReasoningField = 'reasoning_content' | 'reasoning';

/** Facts of one event stream. */
export interface StreamFacts {
  /** Data events other than `[DONE]`. */
  events: number;
  doneMarker: boolean;
  /** Events that carried text or reasoning (the run's content chunks). */
  contentChunks: number;
  /** The first event is a chat delta with a role and no text, reasoning or tool call. */
  roleOnlyFirst: boolean;
  /** Events that carried a non-null `usage`. */
  usageEvents: number;
  /** Where the last `usage` rode; null without usage. */
  usagePlacement: UsagePlacement | null;
  /** The last `usage` seen. */
  finalUsage: Usage | null;
  /** `usage.completion_tokens` of each content chunk that carried usage, in order (running usage). */
  runningCompletionTokens: number[];
  /** The delta field reasoning text came in; null when none came. */
  reasoningField: ReasoningField | null;
  /** Events whose delta carried `tool_calls`. */
  toolCallChunks: number;
  finishReason: string | null;
  /** An error event, or a payload with a top-level `error`. */
  errorEvent: boolean;
}

interface DeltaFacts {
  role: boolean;
  reasoningField: ReasoningField | null;
  toolCalls: boolean;
}

/** Role, reasoning field and tool calls of an event's deltas (chat chunks). */
function deltaFacts(body: Record<string, unknown>): DeltaFacts {
  const facts: DeltaFacts = { role: false, reasoningField: null, toolCalls: false };
  for (const choice of choicesOf(body)) {
    const delta = asObject(choice.delta) ?? asObject(choice.message);
    if (delta === null) continue;
    if (asText(delta.role) !== '') facts.role = true;
    if (asText(delta.reasoning_content) !== '') facts.reasoningField = 'reasoning_content';
    else if (asText(delta.reasoning) !== '') facts.reasoningField ??= 'reasoning';
    if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) facts.toolCalls = true;
  }
  return facts;
}

function placementOf(body: Record<string, unknown>, hasContent: boolean): UsagePlacement {
  if (hasContent) return 'last_content_chunk';
  return choicesOf(body).length === 0 ? 'own_chunk_empty_choices' : 'final_empty_chunk';
}

function emptyFacts(): StreamFacts {
  return {
    events: 0,
    doneMarker: false,
    contentChunks: 0,
    roleOnlyFirst: false,
    usageEvents: 0,
    usagePlacement: null,
    finalUsage: null,
    runningCompletionTokens: [],
    reasoningField: null,
    toolCallChunks: 0,
    finishReason: null,
    errorEvent: false,
  };
}

/** Adds one data event to `f`. */
function addEvent(f: StreamFacts, adapter: EndpointAdapter, e: ProbeEvent): void {
  const body = asObject(e.json);
  if (e.event === 'error' || body?.error !== undefined) f.errorEvent = true;
  if (body === null) return;
  const parsed = adapter.parse(body, true);
  const delta = deltaFacts(body);
  const hasContent = parsed.text !== '' || parsed.reasoning !== '';
  if (f.events === 0) f.roleOnlyFirst = delta.role && !hasContent && !delta.toolCalls;
  f.events += 1;
  if (hasContent) f.contentChunks += 1;
  f.reasoningField ??= delta.reasoningField;
  if (delta.toolCalls) f.toolCallChunks += 1;
  if (parsed.finishReason !== null) f.finishReason = parsed.finishReason;
  if (parsed.usage === null) return;
  f.usageEvents += 1;
  f.finalUsage = parsed.usage;
  f.usagePlacement = placementOf(body, hasContent);
  const running = parsed.usage.completion_tokens;
  if (hasContent && typeof running === 'number') f.runningCompletionTokens.push(running);
}

/** The facts of `events`, read with `adapter`. */
export function streamFacts(adapter: EndpointAdapter, events: readonly ProbeEvent[]): StreamFacts {
  const f = emptyFacts();
  for (const e of events) {
    if (e.data.trim() === '[DONE]') f.doneMarker = true;
    else addEvent(f, adapter, e);
  }
  return f;
}

/** Output tokens per content chunk, and how they were counted. */
export interface TokensPerChunk {
  avg: number;
  /** Most tokens in one chunk; null when only the total was known. */
  max: number | null;
  /** `running_usage`: each chunk's own count; `final_usage`: the total over the chunks. */
  source: 'running_usage' | 'final_usage';
}

/**
 * Output tokens per content chunk: from the running usage (each chunk's count minus the one before),
 * else the final usage's completion tokens spread over the content chunks. Null when neither is known.
 */
export function tokensPerChunk(f: StreamFacts): TokensPerChunk | null {
  const running = f.runningCompletionTokens;
  if (running.length >= 2 && running.length === f.contentChunks) {
    const steps = running.map((n, i) => n - (i === 0 ? 0 : (running[i - 1] as number)));
    const sum = steps.reduce((a, b) => a + b, 0);
    return { avg: sum / steps.length, max: Math.max(...steps), source: 'running_usage' };
  }
  const total = f.finalUsage?.completion_tokens;
  if (typeof total !== 'number' || f.contentChunks === 0) return null;
  return { avg: total / f.contentChunks, max: null, source: 'final_usage' };
}
