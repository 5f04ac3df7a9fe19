/**
 * What `tokenload probe` reports: one finding per habit of the endpoint (each with a structured
 * value for `--json` and the sentence the table shows), the requests it sent, and the tokenload
 * flags the findings call for. Token counts in tokens, times in ms unless the name says `_s`.
 */
import type { ErrorKind } from '../record/types.js';
import type { ReasoningField, TokensPerChunk, UsagePlacement } from './stream-facts.js';

/** One finding: `value` is null when the probe could not tell (then `text` says why). */
export interface Finding<T> {
  value: T | null;
  /** One line for the table. */
  text: string;
}

/** How the measuring client recorded a failed answer (the record's `error`). */
export interface RecordedError {
  kind: ErrorKind;
  code: number;
  message: string;
}

/** Every finding, by its JSON key; the table shows them in this order. */
export interface ProbeFindings {
  /** A stream request answered as an event stream, or as one JSON body. */
  streaming: Finding<'event_stream' | 'json_body'>;
  /** The first chunk is a chat delta with a role and no content (chat only). */
  role_only_first_chunk: Finding<boolean>;
  /** `usage` in a stream asked for it with `stream_options.include_usage`, and where it rode. */
  usage: Finding<{
    present: boolean;
    placement: UsagePlacement | null;
    prompt_tokens: number | null;
    completion_tokens: number | null;
  }>;
  /**
   * `stream_options.continuous_usage_stats`: `running` (usage on every content chunk), `ignored`
   * (answered without it), `rejected` (the request failed).
   */
  continuous_usage: Finding<'running' | 'ignored' | 'rejected'>;
  /** The delta field reasoning text streams in; `none` when no reasoning text came. */
  reasoning_field: Finding<ReasoningField | 'none'>;
  /** Output tokens per content chunk. */
  tokens_per_chunk: Finding<TokensPerChunk>;
  /**
   * A request with `tools` and a named `tool_choice`: `incremental` (tool-call deltas over several
   * chunks), `one_chunk`, `not_called` (answered with text), `rejected` (the request failed).
   */
  tool_call_streaming: Finding<'incremental' | 'one_chunk' | 'not_called' | 'rejected'>;
  /** How a bad request (max tokens 0, streamed; for embeddings an empty `input`) is answered. */
  error_format: Finding<{
    /** What was wrong with the request sent. */
    request: string;
    status: number | null;
    /** The error came inside a 200 event stream. */
    in_band: boolean;
    /** The body's shape: `{"error": {...}}`, `{"object": "error", ...}`, `{"detail": ...}`, text, … */
    shape: string;
    recorded_as: RecordedError | null;
  }>;
  /** `usage` in a non-streamed answer. */
  non_streamed_usage: Finding<boolean>;
  /** `usage.prompt_tokens_details.cached_tokens` when the same prompt was sent a third time. */
  prefix_cache_reporting: Finding<{ cached_tokens: number | null; prompt_tokens: number | null }>;
  /** The server's `usage.prompt_tokens` of one user message minus the client's count of its text. */
  template_overhead: Finding<{ prompt_tokens: number; client_tokens: number; overhead_tokens: number }>;
  /** `GET /v1/models`: status, whether the model is listed, the names served. */
  models_route: Finding<{ status: number | null; listed: boolean | null; served: string[] }>;
  /** `GET /metrics` (at the origin): Prometheus text, and whose metric names. */
  metrics_route: Finding<{
    status: number | null;
    prometheus: boolean;
    flavour: 'vllm' | 'sglang' | 'other' | null;
    metric_families: number;
  }>;
  /** `POST /tokenize` (vLLM's, at the origin): the server's count of the probe text. */
  tokenize_route: Finding<{
    status: number | null;
    count: number | null;
    client_tokens: number;
    max_model_len: number | null;
  }>;
  /** The `Keep-Alive` header, and whether an idle connection was closed within the watch. */
  keep_alive: Finding<{
    header: string | null;
    header_timeout_s: number | null;
    idle_watched_s: number;
    closed_after_s: number | null;
  }>;
}

/** A finding key. */
export type FindingKey = keyof ProbeFindings;

/** One flag the findings call for (or null: advice without a flag), and why. */
export interface Recommendation {
  flag: string | null;
  reason: string;
}

/** One request the probe sent. */
export interface ProbeRequestLine {
  name: string;
  method: 'GET' | 'POST';
  url: string;
  /** HTTP status; null without an answer (or when skipped). */
  status: number | null;
  /** `ok`, the recorded error (`http_status 400: …`), a transport failure, or `skipped: …`. */
  outcome: string;
  ms: number;
}

/** The whole probe report (`--json`). */
export interface ProbeReport {
  tokenload_version: string;
  target: {
    url: string;
    /** Where generation requests were posted. */
    request_url: string;
    model: string;
    endpoint_type: string;
    /** The client tokenizer the template overhead and token checks counted with. */
    tokenizer: string;
  };
  findings: ProbeFindings;
  recommendations: Recommendation[];
  requests: ProbeRequestLine[];
  duration_ms: number;
}
