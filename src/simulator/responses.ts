/**
 * OpenAI-shaped response objects for chat and completions: stream chunks, usage, full bodies and
 * error bodies. Output text comes from a fixed word list (token i is `OUTPUT_WORDS[i % n]`); it is
 * never tokenized.
 */

/** The OpenAI endpoint a response answers. */
export type EndpointKind = 'chat' | 'completion';

/** Words used as output tokens, each a leading space plus a common English word. */
export const OUTPUT_WORDS: readonly string[] = [
  ' token',
  ' the',
  ' model',
  ' says',
  ' hello',
  ' world',
  ' and',
  ' more',
];

/** Text of output tokens [from, to). */
export function outputText(from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += OUTPUT_WORDS[i % OUTPUT_WORDS.length];
  return s;
}

/** OpenAI `usage` object. */
export interface UsageBody {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details?: { reasoning_tokens: number };
}

/** Builds a usage object. */
export function usageBody(
  promptTokens: number,
  cachedTokens: number,
  completion: number,
  reasoning: number,
): UsageBody {
  const u: UsageBody = {
    prompt_tokens: promptTokens,
    completion_tokens: completion,
    total_tokens: promptTokens + completion,
    prompt_tokens_details: { cached_tokens: cachedTokens },
  };
  if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
  return u;
}

/** Identity of one response. */
export interface ResponseMeta {
  kind: EndpointKind;
  id: string;
  created: number;
  model: string;
}

/**
 * One streamed piece of the simulator's tool call (the `toolCalls` option): the first carries the
 * call's `id` and function `name` (and `type: "function"`), every one a piece of its arguments.
 */
export interface ToolCallChunk {
  id?: string;
  name?: string;
  arguments: string;
}

/** The simulator's whole tool call: its id, function name and arguments. */
export interface SimToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** What one chunk carries. */
export interface ChunkContent {
  role?: boolean;
  /** Content text; null for a role-only chunk. */
  content?: string | null;
  reasoning?: string;
  /** A piece of the tool call (chat only), as `delta.tool_calls[0]` with `index` 0. */
  toolCall?: ToolCallChunk;
  finishReason?: string | null;
}

/** The `delta.tool_calls` array of a tool call chunk. */
export function toolCallDeltas(piece: ToolCallChunk): Record<string, unknown>[] {
  const call: Record<string, unknown> = { index: 0 };
  if (piece.id !== undefined) {
    call.id = piece.id;
    call.type = 'function';
  }
  call.function =
    piece.name === undefined
      ? { arguments: piece.arguments }
      : { name: piece.name, arguments: piece.arguments };
  return [call];
}

/** One streamed chunk object (before `data: ` framing). */
export function chunkObject(
  meta: ResponseMeta,
  c: ChunkContent,
  usage: UsageBody | null,
): Record<string, unknown> {
  const finish = c.finishReason ?? null;
  let choice: Record<string, unknown>;
  if (meta.kind === 'chat') {
    const delta: Record<string, unknown> = {};
    if (c.role === true) delta.role = 'assistant';
    if (c.reasoning !== undefined) delta.reasoning_content = c.reasoning;
    if (c.content !== undefined) delta.content = c.content;
    if (c.toolCall !== undefined) delta.tool_calls = toolCallDeltas(c.toolCall);
    choice = { index: 0, delta, logprobs: null, finish_reason: finish };
  } else {
    choice = { index: 0, text: c.content ?? c.reasoning ?? '', logprobs: null, finish_reason: finish };
  }
  const obj: Record<string, unknown> = {
    id: meta.id,
    object: meta.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [choice],
  };
  if (usage !== null) obj.usage = usage;
  return obj;
}

/** The usage-only chunk sent after the last token when `include_usage` is set. */
export function usageChunk(meta: ResponseMeta, usage: UsageBody): Record<string, unknown> {
  return {
    id: meta.id,
    object: meta.kind === 'chat' ? 'chat.completion.chunk' : 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [],
    usage,
  };
}

/**
 * A complete non-streamed body. With `toolCall` (chat only), the message carries it as its one
 * `tool_calls` item, `content` null, and the finish reason is `tool_calls`.
 */
export function fullBody(
  meta: ResponseMeta,
  text: string,
  reasoning: string,
  usage: UsageBody,
  toolCall?: SimToolCall,
): Record<string, unknown> {
  const choice =
    meta.kind === 'chat'
      ? {
          index: 0,
          message: chatMessage(text, reasoning, toolCall),
          logprobs: null,
          finish_reason: toolCall === undefined ? 'length' : 'tool_calls',
        }
      : { index: 0, text, logprobs: null, finish_reason: 'length' };
  return {
    id: meta.id,
    object: meta.kind === 'chat' ? 'chat.completion' : 'text_completion',
    created: meta.created,
    model: meta.model,
    choices: [choice],
    usage,
  };
}

function chatMessage(
  text: string,
  reasoning: string,
  toolCall: SimToolCall | undefined,
): Record<string, unknown> {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: toolCall === undefined ? text : null,
  };
  if (reasoning !== '') message.reasoning_content = reasoning;
  if (toolCall !== undefined)
    message.tool_calls = [
      { id: toolCall.id, type: 'function', function: { name: toolCall.name, arguments: toolCall.arguments } },
    ];
  return message;
}

/** OpenAI error body. */
export function errorBody(
  message: string,
  type: string,
  code: number | string | null,
  param: string | null = null,
) {
  return { error: { message, type, param, code } };
}
