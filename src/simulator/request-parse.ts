/**
 * Validation of OpenAI chat/completions request bodies and extraction of the prompt.
 *
 * Prompt text rule (documented in docs/simulator.md): chat prompts are the text of every message
 * joined with one space (string contents, and the `text` of `type: "text"` content parts); no chat
 * template is applied, so `prompt_tokens` equals the client's default ISL count. Completions take
 * `prompt` as a string, an array of strings (joined with one space), or token ids (used as-is).
 */

/** The endpoint a request came in on. */
export type EndpointKind = 'chat' | 'completion';

/** A validated request. */
export interface ParsedRequest {
  kind: EndpointKind;
  model: string;
  stream: boolean;
  /** Requested output tokens (content only). */
  maxTokens: number;
  includeUsage: boolean;
  continuousUsage: boolean;
  /** Prompt as text, or as token ids when the client sent ids. */
  prompt: { text: string } | { ids: number[] };
}

/** A client error: HTTP status plus OpenAI-style message, param and code. */
export class RequestError extends Error {
  override readonly name = 'RequestError';
  constructor(
    readonly status: number,
    message: string,
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  for (const part of content) {
    const p = part as { type?: unknown; text?: unknown } | null;
    if (p !== null && typeof p === 'object' && typeof p.text === 'string') parts.push(p.text);
  }
  return parts.join(' ');
}

function chatPrompt(body: Record<string, unknown>): { text: string } {
  const messages = body.messages;
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new RequestError(400, "'messages' must be a non-empty array", 'messages', 'invalid_request_error');
  }
  const texts: string[] = [];
  for (const m of messages) {
    if (m === null || typeof m !== 'object') {
      throw new RequestError(400, 'each message must be an object', 'messages', 'invalid_request_error');
    }
    texts.push(messageText((m as { content?: unknown }).content));
  }
  return { text: texts.join(' ') };
}

function isIdArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));
}

function completionPrompt(body: Record<string, unknown>): { text: string } | { ids: number[] } {
  const p = body.prompt;
  if (typeof p === 'string') return { text: p };
  if (isIdArray(p)) return { ids: p };
  if (Array.isArray(p) && p.length > 0 && p.every((x) => typeof x === 'string')) return { text: p.join(' ') };
  if (Array.isArray(p) && p.length === 1 && isIdArray(p[0])) return { ids: p[0] };
  throw new RequestError(
    400,
    "'prompt' must be a string, strings, or token ids",
    'prompt',
    'invalid_request_error',
  );
}

function positiveInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (!Number.isInteger(v) || (v as number) < 1) {
    throw new RequestError(400, `'${key}' must be a positive integer`, key, 'invalid_request_error');
  }
  return v as number;
}

/**
 * Parses and validates a request body.
 * @param raw the body bytes as text.
 * @param defaultMaxTokens output length when the body names none.
 * @throws {RequestError} 400 on invalid JSON or fields.
 */
export function parseRequest(kind: EndpointKind, raw: string, defaultMaxTokens: number): ParsedRequest {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new RequestError(400, 'request body is not valid JSON', null, 'invalid_request_error');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new RequestError(400, 'request body must be a JSON object', null, 'invalid_request_error');
  }
  const b = body as Record<string, unknown>;
  const prompt = kind === 'chat' ? chatPrompt(b) : completionPrompt(b);
  const max = positiveInt(b, 'max_completion_tokens') ?? positiveInt(b, 'max_tokens') ?? defaultMaxTokens;
  const streamOptions = (b.stream_options ?? {}) as Record<string, unknown>;
  return {
    kind,
    model: typeof b.model === 'string' ? b.model : '',
    stream: b.stream === true,
    maxTokens: max,
    includeUsage: streamOptions.include_usage === true,
    continuousUsage: streamOptions.continuous_usage_stats === true,
    prompt,
  };
}
