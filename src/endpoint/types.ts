/**
 * Endpoint adapters: one file per API (chat, completions, …), each a body builder plus a parser of
 * one response JSON object (an SSE event's data or a whole non-streamed body). Chosen from the typed
 * registry in `endpoint/registry.ts`.
 */
import type { ChatMessage, NamedText } from '../dataset/types.js';
import type { ServerTiming } from '../record/server-timing.js';
import type { ToolCallPiece } from '../record/tool-calls.js';
import type { Usage } from '../record/types.js';

/** Everything needed to build one request body. */
export interface BodyInput {
  model: string;
  /** The messages to send (already resolved by the context mode). Completions joins their contents. */
  messages: ChatMessage[];
  stream: boolean;
  /** Requested output tokens; omitted from the body when undefined. */
  maxTokens?: number;
  /** Send `max_tokens` instead of `max_completion_tokens` (chat only; completions always uses `max_tokens`). */
  useLegacyMaxTokens: boolean;
  /** Ask for `stream_options.continuous_usage_stats` (per-chunk usage). */
  perChunkUsage: boolean;
  /**
   * `--server-timing`: ask the server for its per-request timing (`include_metrics: true`, chat and
   * completions). Optional: absent is false.
   */
  serverTiming?: boolean;
  /** `--extra-inputs`, shallow-merged onto the body. */
  extraInputs: Record<string, unknown>;
  /** Per-turn `extra`, shallow-merged after `extraInputs`. */
  turnExtra?: Record<string, unknown>;
  /** The turn's named `texts` (`query`, `passages`), when its input file named them. */
  namedTexts?: readonly NamedText[];
  /**
   * The run's `--system-prompt` text, when it has one. `messages` already carry it (request/system-prompt.ts):
   * as their leading system message when that message is exactly this text, else prepended to the
   * dataset's own. An adapter whose API keeps the system prompt outside the messages (Responses'
   * `instructions`) moves it there in the first case.
   */
  systemPrompt?: string;
}

/** What one response object contributes. Strings are '' when absent. */
export interface ParsedResponse {
  /** Non-reasoning output text (content, tool-call names and arguments). */
  text: string;
  /** Reasoning text (`reasoning_content` or `reasoning`). */
  reasoning: string;
  /** `usage` if this object carries a non-null one. */
  usage: Usage | null;
  /** A `finish_reason` if any choice carries one. */
  finishReason: string | null;
  /** An in-band error (`{"error": …}` payload): its message and code, if any. */
  error: { message: string; code: number | null; type: string | null } | null;
  /**
   * Every choice of this object with its `index` and `finish_reason` (null when none), so a client
   * can tell whether each choice finished (AIPerf: a stream without `[DONE]` is complete only when
   * every choice has a finish reason). Optional: adapters without choices omit it.
   */
  choices?: ReadonlyArray<{ index: number; finishReason: string | null }>;
  /**
   * True when this object ends the stream as `[DONE]` does (the Responses API's terminal events,
   * which have no `[DONE]` after them). Optional: adapters whose streams end with `[DONE]` omit it.
   */
  streamEnd?: boolean;
  /**
   * True when the object carried a result that is not text (an embedding vector). The client then
   * records an empty content chunk, so a request to an endpoint that produces no tokens still
   * counts as answered (latency only, OSL 0). Optional: text-producing adapters omit it.
   */
  nonTokenContent?: boolean;
  /**
   * True when {@link ParsedResponse.usage} holds only some of the response's counts, to be merged
   * into those seen before (Anthropic: input tokens in `message_start`, output tokens in
   * `message_delta`). Absent: a usage object replaces the earlier one.
   */
  usageMerges?: boolean;
  /**
   * The tool call pieces of `choices[0]` (its `tool_calls` items, a legacy `function_call`), when
   * it carries any (chat only): record/tool-calls.ts reassembles them. Absent on every other object.
   */
  toolCalls?: readonly ToolCallPiece[];
  /**
   * With {@link ParsedResponse.toolCalls} only: the object's content text alone (`text` also holds
   * the calls' names and arguments).
   */
  content?: string;
  /**
   * The server's own timing of the request, when this object carries it (a top-level vLLM `metrics`
   * or llama.cpp `timings` object, record/server-timing.ts). Optional: absent on every other object.
   */
  serverTiming?: ServerTiming;
}

/**
 * The run's settings an adapter may depend on (the `template` type's body template and answer field
 * live in its `--extra-inputs`). Plain JSON, so a worker thread can be given them and build the same
 * adapter ({@link EndpointAdapter.configure}).
 */
export interface EndpointOptions {
  /** The run's `--extra-inputs`. */
  readonly extraInputs: Readonly<Record<string, unknown>>;
}

/** One endpoint type. */
export interface EndpointAdapter {
  /** `--endpoint-type` value. */
  readonly name: string;
  /** Default URL path, overridable by `--endpoint`. */
  readonly defaultPath: string;
  /**
   * Default path of streamed requests when the API streams on a different route (TGI
   * `/generate_stream`); absent when streaming uses {@link EndpointAdapter.defaultPath}.
   */
  readonly streamingPath?: string;
  /** Whether the endpoint can stream. */
  readonly streamable: boolean;
  /**
   * Whether the endpoint generates output tokens, so a request's output length is sent and its OSL
   * measured against it; false for embeddings (no output length is sent, none comes back).
   */
  readonly generatesTokens: boolean;
  /**
   * Whether the server applies its chat template to the messages sent (chat, responses); false for a
   * plain prompt (completions, TGI generate, embeddings). Names what the usage check learns.
   */
  readonly chatTemplated: boolean;
  /**
   * Whether `--server-timing` asks this API for the server's per-request timing (`include_metrics:
   * true` in the body: chat and completions, vLLM's field); absent: the API has no such field.
   */
  readonly asksServerTiming?: boolean;
  /**
   * Headers the API expects on every request (Anthropic's `anthropic-version`); a `-H` header of the
   * same name (any case) replaces one. Absent: none.
   */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /**
   * The headers that carry `--api-key` (Anthropic's `x-api-key`). Absent: `Authorization: Bearer <key>`.
   */
  authHeaders?(apiKey: string): Record<string, string>;
  /**
   * Builds this endpoint type's adapter for a run's options; absent when the adapter is the same for
   * every run. Adapters are obtained through `adapterFor` (endpoint/registry.ts), which calls it.
   * @throws {ConfigError} when the options do not make a usable adapter (the `template` type without
   *   its template).
   */
  configure?(options: EndpointOptions): EndpointAdapter;
  /**
   * The options a configured adapter was built with, as {@link EndpointAdapter.configure} takes them
   * (what a worker thread is sent to build the same adapter); absent for an unconfigured adapter.
   */
  readonly options?: EndpointOptions;
  /** Builds the JSON body. Merge order: fields, `extraInputs`, `turnExtra`, then `stream_options`. */
  buildBody(input: BodyInput): Record<string, unknown>;
  /** Parses one response JSON value (SSE event data, or a non-streamed body). Never throws. */
  parse(json: unknown, streaming: boolean): ParsedResponse;
  /**
   * Optional fast path for one streamed event: reads the UTF-8 JSON text in `bytes[start, end)`
   * directly and returns exactly what `parse(JSON.parse(text), true)` would, or `undefined` to
   * decline (the caller then decodes, `JSON.parse`s and calls {@link EndpointAdapter.parse}; that
   * path also decides whether the text is invalid JSON). Never throws.
   */
  parseBytes?(bytes: Buffer, start: number, end: number, scratch: StreamScratch): ParsedResponse | undefined;
}

/**
 * Per-response state that {@link EndpointAdapter.parseBytes} may keep between the events of one
 * stream (e.g. to recognize events that differ from the previous one only in their text). Opaque to
 * the caller, who passes a fresh `{ memo: undefined }` for each response and the same one for all of
 * its events.
 */
export interface StreamScratch {
  memo: unknown;
}

/**
 * The URL path of a request: `--endpoint` when given, else the adapter's streaming path for a
 * streamed request (when it has one), else its default path.
 */
export function endpointPathFor(adapter: EndpointAdapter, streaming: boolean, override?: string): string {
  if (override !== undefined) return override;
  if (streaming && adapter.streamable && adapter.streamingPath !== undefined) return adapter.streamingPath;
  return adapter.defaultPath;
}

/**
 * The URL path (and query) a request to `target` (origin plus optional base path and query, as
 * `--url` gives it) is posted to: the base path joined with the endpoint `path`, as AIPerf joins them.
 * A base path that already ends with `path` is used as it is (`--url` naming the whole endpoint). A
 * base path ending in `/v1` is read as an OpenAI base URL (the SDK convention, `--url
 * http://host:8000/v1`): a `/v1/…` path keeps one `/v1` (`/v1/chat/completions`, not
 * `/v1/v1/chat/completions`), and a path outside `/v1` (TGI's `/generate`) goes beside it, at the
 * base without its `/v1`. A query in `target` (`?api-version=…`) is carried to every path.
 */
export function requestPathFor(target: string, path: string): string {
  const { pathname, search } = new URL(target);
  return `${joinedPath(pathname, path)}${search}`;
}

function joinedPath(pathname: string, path: string): string {
  const base = pathname === '/' ? '' : pathname.replace(/\/+$/, '');
  if (base === '') return path === '' ? '/' : path;
  if (base.endsWith(path)) return base;
  if (base.endsWith('/v1')) {
    if (path.startsWith('/v1/')) return `${base}${path.slice('/v1'.length)}`;
    return `${base.slice(0, -'/v1'.length)}${path}`;
  }
  return `${base}${path}`;
}

/**
 * The full URL of a server route beside the endpoint (`/v1/models`) for `target`, derived as requests
 * derive theirs ({@link requestPathFor}, query carried): a base path that names the whole endpoint
 * (`--url …/v1/chat/completions`, `endpointPath` the run's) is the endpoint itself, so the route goes
 * beside it (`…/v1/models`), not under it.
 */
export function routeUrlFor(target: string, route: string, endpointPath: string): string {
  const url = new URL(target);
  const base = url.pathname.replace(/\/+$/, '');
  const serverBase = base.endsWith(endpointPath) ? base.slice(0, base.length - endpointPath.length) : base;
  return `${url.origin}${requestPathFor(`${url.origin}${serverBase}${url.search}`, route)}`;
}
