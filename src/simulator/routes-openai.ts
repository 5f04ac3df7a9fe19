/**
 * Simulator routes `POST /v1/chat/completions` and `POST /v1/completions` (OpenAI API reference,
 * "Chat" and "Completions"): their request parsing and the wire format of their responses.
 *
 * Prompt text rule (documented in docs/simulator.md): chat prompts are the text of every message
 * joined with one space (string contents, and the `text` of `type: "text"` content parts), so
 * `prompt_tokens` equals the client's default ISL count; with the `chatTemplate` option `chatml` the
 * messages are wrapped in ChatML instead (chat-template.ts). Completions take `prompt` as a string,
 * an array of strings (joined with one space), or token ids (used as-is).
 *
 * Streamed: one `chat.completion.chunk` / `text_completion` chunk per piece (chat: the text in
 * `delta.reasoning_content` or `delta.content`, `role: "assistant"` on the first chunk or in a
 * role-only first chunk; completions: `text`), `finish_reason: "length"` on the last, running
 * `usage` on each with `stream_options.continuous_usage_stats`, a usage-only chunk with
 * `stream_options.include_usage`, then `data: [DONE]` (after an in-band error too). Not streamed:
 * one `chat.completion` / `text_completion` body. With the `serverTiming` option, the usage-only
 * chunk and the body also carry the simulator's timing of the request (server-timing.ts). With the
 * `toolCalls` option `when-tools`, a chat request that declares `tools` gets its content tokens as
 * one tool call's arguments instead (`{"text":"<words>"}`): streamed in `delta.tool_calls[0]`, the
 * id, type and name on the first piece, `finish_reason: "tool_calls"`; not streamed, as
 * `message.tool_calls` with `content` null.
 */
import { createHash } from 'node:crypto';
import { applyChatTemplate, type TemplateMessage } from './chat-template.js';
import { ChunkFramer } from './chunk-text.js';
import { isTokenIds, parseJsonObject, positiveIntField, RequestError } from './request-parse.js';
import { type ChunkContent, type EndpointKind, errorBody, fullBody, type ResponseMeta } from './responses.js';
import type { GenerateRoute } from './routes-generate.js';
import {
  type RouteMeta,
  type RouteRequest,
  SSE_HEADERS,
  sseFrame,
  type WireFormat,
  type WireOptions,
} from './wire-format.js';

/** A validated chat/completions request. */
export interface OpenAiRequest extends RouteRequest {
  kind: EndpointKind;
  /** `stream_options.include_usage`: a usage-only chunk before `[DONE]`. */
  includeUsage: boolean;
  /** `stream_options.continuous_usage_stats`: the running usage on every chunk. */
  continuousUsage: boolean;
  /**
   * A chat request that declares `tools`: the call the `toolCalls` option answers it with (its id
   * from the prompt text, the first tool's name); absent otherwise.
   */
  tool?: { id: string; name: string };
}

/** Name of the first declared tool (`{type, function: {name}}`, or a flat `{name}`); `tool` when it has none. */
function firstToolName(tools: readonly unknown[]): string {
  const first = tools[0] as { name?: unknown; function?: { name?: unknown } } | null;
  const name = first?.function?.name ?? first?.name;
  return typeof name === 'string' && name !== '' ? name : 'tool';
}

/**
 * The tool call a request declaring `tools` is answered with: id `call_` plus the first 12 hex
 * digits of the SHA-256 of its prompt text (the same prompt always gets the same id, streamed or
 * not), the first tool's name. Undefined without tools.
 */
function toolOf(body: Record<string, unknown>, promptText: string): OpenAiRequest['tool'] {
  const tools = body.tools;
  if (!Array.isArray(tools) || tools.length === 0) return undefined;
  const hash = createHash('sha256').update(promptText).digest('hex').slice(0, 12);
  return { id: `call_${hash}`, name: firstToolName(tools) };
}

/** The start and end of the simulator's tool call arguments: `{"text":"<output words>"}`. */
const ARGUMENTS_HEAD = '{"text":"';
const ARGUMENTS_TAIL = '"}';

/** A message `content` as text: a string, or the `text` of its content parts joined with one space. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p !== null && typeof p === 'object' && typeof p.text === 'string') parts.push(p.text);
  }
  return parts.join(' ');
}

function chatPrompt(body: Record<string, unknown>): { text: string; messages: TemplateMessage[] } {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new RequestError(400, "'messages' must be a non-empty array", 'messages', 'invalid_request_error');
  }
  const parsed: TemplateMessage[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') {
      throw new RequestError(400, 'each message must be an object', 'messages', 'invalid_request_error');
    }
    const { role, content } = m as { role?: unknown; content?: unknown };
    parsed.push({ role: typeof role === 'string' ? role : 'user', text: messageText(content) });
  }
  return { text: applyChatTemplate('none', parsed), messages: parsed };
}

function completionPrompt(body: Record<string, unknown>): { text: string } | { ids: number[] } {
  const p = body.prompt;
  if (typeof p === 'string') return { text: p };
  if (isTokenIds(p)) return { ids: p };
  if (Array.isArray(p) && p.length > 0 && p.every((x) => typeof x === 'string')) return { text: p.join(' ') };
  if (Array.isArray(p) && p.length === 1 && isTokenIds(p[0])) return { ids: p[0] };
  throw new RequestError(
    400,
    "'prompt' must be a string, strings, or token ids",
    'prompt',
    'invalid_request_error',
  );
}

/** @throws {RequestError} 400 on invalid JSON or fields. */
function parseOpenAiRequest(kind: EndpointKind, raw: string, defaultMaxTokens: number): OpenAiRequest {
  const b = parseJsonObject(raw);
  const prompt = kind === 'chat' ? chatPrompt(b) : completionPrompt(b);
  const max =
    positiveIntField(b, 'max_completion_tokens') ?? positiveIntField(b, 'max_tokens') ?? defaultMaxTokens;
  const streamOptions = (b.stream_options ?? {}) as Record<string, unknown>;
  const tool = kind === 'chat' && 'text' in prompt ? toolOf(b, prompt.text) : undefined;
  return {
    kind,
    model: typeof b.model === 'string' ? b.model : '',
    stream: b.stream === true,
    maxTokens: max,
    includeUsage: streamOptions.include_usage === true,
    continuousUsage: streamOptions.continuous_usage_stats === true,
    prompt,
    ...(tool === undefined ? {} : { tool }),
  };
}

const STREAM_HEADERS = { ...SSE_HEADERS, connection: 'keep-alive' };

/** The wire format of one chat/completions response; chunk frames come from a {@link ChunkFramer}. */
function openAiFormat(req: OpenAiRequest, meta: RouteMeta, options: WireOptions): WireFormat {
  const responseMeta: ResponseMeta = { kind: req.kind, ...meta };
  const framer = new ChunkFramer(responseMeta);
  /** Chat only: `role` still has to be sent (on the first chunk, unless a role-only chunk took it). */
  let roleDue = req.kind === 'chat';
  /** The call the content tokens are sent as (the `toolCalls` option and a request with tools), or null. */
  const tool = options.toolCalls === true && req.tool !== undefined ? req.tool : null;
  /** The tool call's first piece (id, name, the arguments' head) is still to be sent. */
  let toolHeadDue = true;
  return {
    streamHeaders: STREAM_HEADERS,
    start: () => {
      if (!roleDue || !options.roleOnlyFirstChunk) return '';
      roleDue = false;
      return framer.chunk({ role: true, content: null }, null);
    },
    delta: (piece) => {
      let c: ChunkContent;
      if (piece.reasoning) c = { reasoning: piece.text };
      else if (tool === null) c = { content: piece.text };
      else {
        const args = `${toolHeadDue ? ARGUMENTS_HEAD : ''}${piece.text}${piece.last ? ARGUMENTS_TAIL : ''}`;
        c = {
          toolCall: toolHeadDue ? { id: tool.id, name: tool.name, arguments: args } : { arguments: args },
        };
        toolHeadDue = false;
      }
      if (roleDue) c.role = true;
      roleDue = false;
      if (piece.last) c.finishReason = tool === null ? 'length' : 'tool_calls';
      return framer.chunk(c, req.continuousUsage ? piece.upTo.usage : null);
    },
    end: (output) => (req.includeUsage ? framer.usage(output.usage, output.serverTiming) : ''),
    error: () => sseFrame(errorBody('simulated in-band error', 'internal_server_error', 500)),
    done: 'data: [DONE]\n\n',
    body: (output) => ({
      ...fullBody(
        responseMeta,
        output.text,
        output.reasoning,
        output.usage,
        tool === null
          ? undefined
          : { ...tool, arguments: `${ARGUMENTS_HEAD}${output.text}${ARGUMENTS_TAIL}` },
      ),
      ...output.serverTiming,
    }),
  };
}

/** `POST /v1/chat/completions`. */
export const CHAT_ROUTE: GenerateRoute<OpenAiRequest> = {
  endpoint: 'chat',
  parse: (raw, max) => parseOpenAiRequest('chat', raw, max),
  format: openAiFormat,
};

/** `POST /v1/completions`. */
export const COMPLETIONS_ROUTE: GenerateRoute<OpenAiRequest> = {
  endpoint: 'completion',
  parse: (raw, max) => parseOpenAiRequest('completion', raw, max),
  format: openAiFormat,
};
