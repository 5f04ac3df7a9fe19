/**
 * What the simulator's one response writer (routes-writer.ts) asks of each API's wire shapes. The
 * writer alone decides when a piece of output is cut, when a response ends and how faults act; a
 * {@link WireFormat} only turns those pieces and output snapshots into SSE frames and bodies.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { TemplateMessage } from './chat-template.js';
import { outputText, type UsageBody, usageBody } from './responses.js';

/** A generation request as every route parses it. */
export interface RouteRequest {
  model: string;
  stream: boolean;
  /** Output tokens to generate (content only; reasoning tokens come on top). */
  maxTokens: number;
  /**
   * The prompt as text (tokenized by the simulator's tokenizer) or as token ids (used as they are).
   * A chat request also gives its messages, which the `chatTemplate` option may wrap instead.
   */
  prompt: { text: string; messages?: readonly TemplateMessage[] } | { ids: number[] };
}

/** Identity of one response. */
export interface RouteMeta {
  /** The simulator request id, `sim-<n>`. */
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

/** Per-response switches a format may honour. */
export interface WireOptions {
  /** Send a role-only first chunk (the `roleOnlyFirstChunk` option or the `role-chunk` fault). */
  roleOnlyFirstChunk: boolean;
  /** Answer a request that declares tools with a tool call (the `toolCalls` option `when-tools`). */
  toolCalls?: boolean;
}

/**
 * Output tokens [0, `tokens`) of a response, reasoning first: their usage and texts, built only
 * when read (most formats never read the texts of a stream).
 */
export class WireOutput {
  /**
   * @param tokens output tokens so far (reasoning included).
   * @param reasoningTokens reasoning tokens the response starts with (its first `reasoningTokens`).
   * @param promptTokens prompt tokens of the request.
   * @param cachedTokens prompt tokens served from the prefix cache.
   * @param serverTiming top-level fields of the server's own timing (`{metrics}` or `{timings}`,
   *   server-timing.ts) for the final usage chunk or body of a format that carries them; null for none.
   */
  constructor(
    readonly tokens: number,
    private readonly reasoningTokens: number,
    private readonly promptTokens: number,
    private readonly cachedTokens: number,
    readonly serverTiming: Readonly<Record<string, unknown>> | null = null,
  ) {}

  /** OpenAI `usage` of these tokens. */
  get usage(): UsageBody {
    const reasoning = Math.min(this.tokens, this.reasoningTokens);
    return usageBody(this.promptTokens, this.cachedTokens, this.tokens, reasoning);
  }

  /** Content text (reasoning excluded). */
  get text(): string {
    return outputText(0, Math.max(0, this.tokens - this.reasoningTokens));
  }

  /** Reasoning text. */
  get reasoning(): string {
    return outputText(0, Math.min(this.tokens, this.reasoningTokens));
  }
}

/** One streamed piece: the tokens of one chunk, all reasoning or all content. */
export interface WireDelta {
  text: string;
  reasoning: boolean;
  /** The piece holds the last output token. */
  last: boolean;
  /** The output up to the end of this piece. */
  upTo: WireOutput;
}

/**
 * The wire shapes of one response (made per request: a format may depend on the request). Each
 * frame method returns complete SSE frames (`event:`/`data:` lines and a blank line), or ''.
 */
export interface WireFormat {
  /** Headers of a streamed response (status 200). */
  readonly streamHeaders: OutgoingHttpHeaders;
  /** Frames sent right after the stream's headers. */
  start(): string;
  /** Frames of one streamed piece. */
  delta(piece: WireDelta): string;
  /** Frames after the last piece (usage, terminal event), before {@link WireFormat.done}. */
  end(output: WireOutput): string;
  /** Frames of a simulated in-band error, before {@link WireFormat.done}. */
  error(): string;
  /** What closes a stream after its end or error frames (OpenAI's `data: [DONE]`); '' for nothing. */
  readonly done: string;
  /** A non-streamed success body (written as JSON). */
  body(output: WireOutput): unknown;
}

/** The headers of an SSE stream. */
export const SSE_HEADERS: Readonly<OutgoingHttpHeaders> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
};

/** An SSE frame of `data` as JSON, with an optional event type. */
export function sseFrame(data: unknown, event?: string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  return `${head}data: ${JSON.stringify(data)}\n\n`;
}
