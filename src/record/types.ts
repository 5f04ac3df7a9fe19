/**
 * Per-request records. The client fills a {@link RawRecord} as bytes arrive; the record stage turns it
 * into a {@link ProcessedRecord} with token counts and per-record metrics; exporters stream those to
 * `profile_export.jsonl` as each request completes.
 *
 * Time convention: every `*Ns` field is a monotonic timestamp in nanoseconds on the run's
 * {@link TimeBase} (`performance.now() × 1e6` of the process that took it); convert to epoch ns with
 * `TimeBase.toEpochNs` only when exporting.
 */
import type { ServerTiming, ServerTimingSource } from './server-timing.js';

/**
 * Why a request failed. Classification order follows the SSE fixture format (`test/fixtures/sse/FORMAT.md` §6.3):
 * http_status, in_band_error, timeout, connection_reset, stream_incomplete, no_content; plus
 * unreadable_body (a 200 answer that was neither an event stream nor JSON, e.g. a proxy's HTML page),
 * malformed_event (an event of a 200 stream whose data is not JSON), event_too_large (an event over
 * the client's size cap, `MAX_EVENT_BYTES` of client/sse-decoder.ts),
 * connection_error (could not connect / send), cancelled (client cancellation or Ctrl-C, code 499),
 * and client_error (a bug or bad body on our side; never hidden).
 */
export type ErrorKind =
  | 'http_status'
  | 'in_band_error'
  | 'timeout'
  | 'connection_reset'
  | 'stream_incomplete'
  | 'no_content'
  | 'unreadable_body'
  | 'malformed_event'
  | 'event_too_large'
  | 'connection_error'
  | 'cancelled'
  | 'client_error';

/** A failed request's cause. `code` is the HTTP status, or AIPerf's convention (502 in-band, 499 cancelled, 408 timeout). */
export interface RecordError {
  kind: ErrorKind;
  code: number;
  /** Short type name, e.g. the HTTP reason phrase or the error class (`Too Many Requests`, `TimeoutError`). */
  type: string;
  /** The server's own message where there is one, else a description of the failure. */
  message: string;
  /** Monotonic ns at which the client decided the request failed. */
  failedAtNs: number;
  /** `Retry-After` header of a 429/503, verbatim. */
  retryAfter?: string;
}

/** The `usage` object of an OpenAI-compatible response, as far as we read it. Token counts. */
export interface Usage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

/**
 * One content chunk: an SSE event (or non-streamed body) that carried non-empty text, or a non-token
 * result (an embedding), which gives a chunk with empty `text` and `reasoning`.
 */
export interface ContentChunk {
  /** Arrival (monotonic ns) of the network read that completed the event. */
  atNs: number;
  /** Non-reasoning text of the chunk ('' for a pure reasoning chunk). */
  text: string;
  /** Reasoning text (`delta.reasoning_content` / `delta.reasoning`), '' if none. */
  reasoning: string;
  /** Running `usage.completion_tokens` carried by this chunk (continuous usage stats), if any. */
  usageCompletionTokens?: number;
}

/**
 * One tool call of a live chat reply (an OpenAI chat `tool_calls` item), as it is threaded into the
 * assistant message of a `deltas_without_responses` history: reassembled from the streamed pieces
 * (record/tool-calls.ts), or taken from a whole answer's `choices[0].message`.
 */
export interface ToolCall {
  /** The call's id as the server sent it (never remapped); absent when it sent none (a legacy `function_call`). */
  id?: string;
  /** The call's type as sent; `function` when the server sent none. */
  type: string;
  /** The function called: its name, and its arguments (a JSON text, pieces concatenated in arrival order). */
  function: { name: string; arguments: string };
}

/**
 * What a live chat reply with tool calls contributes to a session's history beyond its text: the
 * reply's content text alone (the record's chunk texts also hold the calls' names and arguments,
 * which count as output) and its tool calls in `index` order.
 */
export interface ToolReply {
  /** Content text of the reply, tool-call text excluded ('' when it had none). */
  content: string;
  toolCalls: ToolCall[];
}

/**
 * Who a request is: the identity and bookkeeping fields the caller knows before it is sent. The
 * client copies them into the request's {@link RawRecord} unchanged (declared once, here).
 */
export interface RequestIdentity {
  conversationId: string;
  /**
   * The session's own id when it is not `conversationId`: a branch session of a Bailian tree replay
   * (`<root id>/<chat_id>`, dataset/types.ts), whose requests are recorded under the tree's root id.
   * With `turnIndex` it names the request's turn uniquely (`tokenload merge` rebuilds its prompt from
   * it, merge/merged-ideal.ts); absent for every other session.
   */
  sessionId?: string;
  /** 0-based turn index within the conversation. */
  turnIndex: number;
  /** 0-based index of the conversation in dispatch order (AIPerf `session_num`). */
  sessionNum: number;
  xRequestId: string;
  xCorrelationId: string;
  model: string;
  /** Trace request type (Bailian `type`), if the dataset has one. */
  requestType?: string;
  /** Monotonic ns the schedule intended this request to be sent at; null without a schedule. */
  scheduledNs: number | null;
  /**
   * Prompt tokens as the client built them (exact for synthesized prompts): the turn's own messages
   * through the chat template with `--apply-chat-template`, else their texts; null if unknown.
   */
  inputTokens: number | null;
  /**
   * With `--apply-chat-template` only: tokens of the turn's own message texts, without the template
   * (`inputTokens` is then the templated count). Record metric `input_text_tokens`.
   */
  textInputTokens?: number;
  /** `max_tokens` / `max_completion_tokens` sent, if any. */
  requestedOutputTokens: number | null;
  /**
   * Message layout of the prompt sent: each role with its count, in order of first appearance
   * (`user×1`, `system×1 user×1`, `user×2 assistant×1`). The usage check learns the server's chat
   * template overhead per layout. Absent for a verbatim payload.
   */
  promptLayout?: string;
  /**
   * Client token count of every message sent, history included (for a self-contained turn,
   * `inputTokens`): their texts, or with `--apply-chat-template` the whole rendered prompt; what the
   * server's `usage.prompt_tokens` is compared with. Absent when unknown.
   */
  sentPromptTokens?: number;
  /**
   * The server the request went to, as `--url` gave it (normalized: origin plus any base path).
   * Absent only for requests not sent by a run (tests, the client's own probes).
   */
  serverUrl?: string;
}

/**
 * How a kept-alive connection ended while idle (no request on it), so that the next request needed
 * another one.
 */
export interface IdleClose {
  /** How long it had been idle (since its last answer ended) when it closed, ns. */
  idleNs: number;
  /** True when the server closed it (its end of the connection ended first); false when the client did. */
  byServer: boolean;
  /** The keep-alive timeout the server announced (`Keep-Alive: timeout=N` response header), s; null when none. */
  keepAliveS: number | null;
}

/** What the client observed for one request, before token counting: its identity plus observations. */
export interface RawRecord extends RequestIdentity {
  /**
   * Monotonic ns at which the client began the request, before it waited for a connection (AIPerf
   * `start_perf_ns`; TTFT and request latency are measured from here, as AIPerf does).
   */
  startNs: number;
  /**
   * Monotonic ns at which the request's last byte (headers and body) was handed to the socket: the
   * request is on the wire. `sentNs − startNs` is the wait for a connection (a free one from the pool,
   * or a new one to open) plus the socket write. Null when it never got that far (e.g. connect refused).
   */
  sentNs: number | null;
  /**
   * True when the request went out on a connection that was already open (kept alive from an earlier
   * request, pre-opened before the run, or opened ahead of a built request of a fixed schedule); false
   * when it waited for a new one to be opened; null when it never got a connection.
   */
  connectionReused: boolean | null;
  /** How long opening the new connection took (TCP, plus TLS for https), ns; null when reused or none. */
  connectDurationNs: number | null;
  /**
   * Set when the connection this request would have reused had been closed while idle (a keep-alive
   * timeout ran out); the request then waited for a new connection (`connectionReused` false) or
   * took one opened just before its send (client/connector.ts). Absent otherwise.
   */
  idleClose?: IdleClose;
  /** Monotonic ns when response status and headers arrived. */
  ackNs: number | null;
  /**
   * How a 200 answer came: true as an event stream (`text/event-stream`), false as one whole body
   * (a JSON answer, e.g. from a server that ignores `stream: true`); null without a 200 answer.
   */
  responseStreamed: boolean | null;
  /** Content chunks in arrival order (reasoning chunks included). */
  chunks: ContentChunk[];
  /** Monotonic ns of `[DONE]` or of the clean end of the body, whichever came first. */
  streamEndNs: number | null;
  /** Monotonic ns when the connection was released (body fully consumed, or failure). */
  endNs: number;
  /** Last non-null `usage` object the server sent; null if none. */
  usage: Usage | null;
  /** `finish_reason` of the last choice that had one. */
  finishReason: string | null;
  /** HTTP status, null if no response arrived. */
  httpStatus: number | null;
  /** SSE or JSON parse errors seen (the request may still succeed). */
  parseErrors: number;
  error: RecordError | null;
  /** True when the client cancelled the request (cancellation rate, or Ctrl-C grace expiry). */
  cancelled: boolean;
  /**
   * Set when the run itself cancelled the request while it was in flight: at the
   * `--benchmark-duration` cut-off after its grace period, or after Ctrl-C (its grace period, or a
   * second Ctrl-C). Its true latency is longer than its elapsed time, unknown: right-censored (the
   * tails section, metrics/tails.ts). A `--request-cancellation-rate` cancellation is not censored.
   * Set by the sender; absent otherwise.
   */
  censored?: true;
  /**
   * Prompt tokens an ideal (infinite) prefix cache would already hold when this request was sent:
   * the leading blocks of its synthesized prompt that requests sent before it in this run had
   * (dataset/prefix-chain.ts). Set by the sender; absent for prompts not built from blocks, for turns
   * sent with history, and once the run's ideal cache is full.
   */
  idealCachedTokens?: number;
  /**
   * How long the request waited for a prefill slot (`--prefill-concurrency`) before the client began
   * it, ns: client-side queueing after its scheduled time, before `startNs`. Set by the sender; absent
   * without a prefill gate.
   */
  prefillWaitNs?: number;
  /**
   * How much of the request's lateness the session cap imposed (`--concurrency` with a schedule),
   * ns: from its scheduled time to the moment a session slot freed, 0 when it did not wait for one.
   * Set by the sender from what the load strategy says; absent without a cap or without a schedule.
   */
  concurrencyWaitNs?: number;
  /**
   * The server's own timing of this request, when its answer carried one (vLLM `metrics`, llama.cpp
   * `timings`: record/server-timing.ts); kept beside the client's times, never in their place.
   * Absent when the server sent none.
   */
  serverTiming?: ServerTiming;
  /**
   * Set when the reply (`choices[0]`) carried tool calls (`tool_calls`, or a legacy `function_call`):
   * its content and calls, for the next turn of a `deltas_without_responses` session
   * (request/conversation-context.ts). Absent otherwise; not kept in the processed record.
   */
  toolReply?: ToolReply;
  /**
   * Set when the stream was cumulative (each text chunk repeated the text so far, FORMAT.md §6.1):
   * the chunks' texts were then cut to what each added when the record finished
   * (record/stream-integrity.ts `settleCumulative`). Absent otherwise.
   */
  cumulativeText?: true;
}

/** A `usage` field that contradicted the stream or the request (FORMAT.md §6.2). */
export type UsageFault = 'completion_tokens' | 'reasoning_tokens' | 'total_tokens' | 'prompt_tokens';

/**
 * Buffered delivery: at least half of the gaps between content chunks were 0 (several chunks
 * completed by one network read) and one read completed 5 (record/stream-integrity.ts) or more.
 */
export interface BufferedDelivery {
  /** Most content chunks one network read completed. */
  largest_burst_chunks: number;
  /** Gaps between consecutive content chunks that were 0 (same read), of `gaps`. */
  zero_gaps: number;
  /** Gaps between consecutive content chunks (content chunks − 1). */
  gaps: number;
}

/**
 * What was wrong with one request's stream (`stream_integrity` of its `profile_export.jsonl` line);
 * each key present only when it applies, and the whole object absent for a clean stream.
 */
export interface StreamIntegrity {
  /** The stream arrived in bursts (a proxy or gateway held it back): its TTFT, ITL and gaps measure that. */
  buffered?: BufferedDelivery;
  /**
   * Every text chunk repeated the whole text so far: each chunk's text was cut to what it added, so
   * the output text (and a multi-turn history) is the last chunk's text.
   */
  cumulative?: true;
  /**
   * The `usage` fields that contradicted the stream or the request; the client's counts replaced
   * the usage (record/stream-integrity.ts `trustedUsage`).
   */
  usage_untrusted?: UsageFault[];
}

/** Metric values of one record keyed by AIPerf metric tag, in display units (ms, tokens, tokens/s). */
export type RecordMetrics = Record<string, number | number[]>;

/** A record after token counting and per-record metric computation. Response text is dropped. */
export interface ProcessedRecord {
  raw: Omit<RawRecord, 'chunks' | 'toolReply'> & { chunkCount: number };
  metrics: RecordMetrics;
  /** True when the record has no error and counts in the success statistics. */
  valid: boolean;
  /**
   * Set when `--per-chunk-usage` was on but this record's ITL fell back to OSL − 1 (its first chunk
   * carried no usable running usage); counted for the run's warning.
   */
  itlPerChunkFallback?: true;
  /**
   * Set when the run streams but the server answered this request with one whole body
   * (`responseStreamed: false`): its streaming metrics (TTFT, ITL, chunk gaps, …) were not computed.
   */
  notStreamed?: true;
  /** Where the record's ISL came from (record/tokens.ts); absent when ISL is unknown. */
  islSource?: IslSource;
  /** Where the record's OSL came from (record/tokens.ts). */
  oslSource: OslSource;
  /** Where the record's server timing came from (its `server_*` metrics); absent when it had none. */
  serverTimingSource?: ServerTimingSource;
  /**
   * The server timing fields the answer sent unusable (record/server-timing.ts `invalid`), when it
   * had any: the run warns with their count. Not written to the records file.
   */
  serverTimingInvalid?: string[];
  /** What was wrong with its stream or usage (record/stream-integrity.ts); absent for a clean stream. */
  streamIntegrity?: StreamIntegrity;
}

/** A failure as `profile_export.jsonl` carries it: all of {@link RecordError} but the monotonic `failedAtNs`. */
export type LineError = Omit<RecordError, 'failedAtNs'>;

/** The {@link RawRecord} fields one `profile_export.jsonl` line carries. */
export type LineRawField =
  | 'sessionNum'
  | 'conversationId'
  | 'sessionId'
  | 'turnIndex'
  | 'xRequestId'
  | 'xCorrelationId'
  | 'serverUrl'
  | 'requestType'
  | 'scheduledNs'
  | 'startNs'
  | 'sentNs'
  | 'connectionReused'
  | 'ackNs'
  | 'endNs'
  | 'responseStreamed'
  | 'cancelled'
  | 'censored'
  | 'finishReason'
  | 'requestedOutputTokens'
  | 'inputTokens'
  | 'sentPromptTokens'
  | 'promptLayout'
  | 'usage';

/**
 * A processed record as one `profile_export.jsonl` line carries it: export/jsonl-writer.ts writes
 * it and export/record-reader.ts reads it back exactly (its `*Ns` times on a base of the reader's).
 * It is everything the run summary reads (src/metrics takes this type, not {@link ProcessedRecord}),
 * so a summary recomputed from the file, as `tokenload merge` does, is the run's own. `valid` is
 * `raw.error === null`; `notStreamed` follows from `response_streamed` and the run's streaming flag.
 */
export type LineRecord = Omit<ProcessedRecord, 'raw'> & {
  raw: Pick<RawRecord, LineRawField> & { error: LineError | null };
};

/** Where an ISL came from: the server's `usage.prompt_tokens`, or the prompt tokenload built. */
export type IslSource = 'server_usage' | 'client_prompt';

/**
 * Where an OSL came from: the server's `usage.completion_tokens`, the client tokenizer's count of
 * the output text, or one token per content chunk (no tokenizer).
 */
export type OslSource = 'server_usage' | 'client_tokenizer' | 'content_chunks';
