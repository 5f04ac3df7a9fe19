/**
 * What the server's answers were like, beside the metrics: successful requests of a streaming run
 * that came as one whole body (a server that ignores `stream: true`), and where each successful
 * request's token counts came from (the server's `usage`, or the client's own counts). They make the
 * summary's `responses` section and its warnings, so a run never shows a number a response could not
 * give without saying so.
 */
import type { LineRecord } from '../record/types.js';

/** The summary's `responses` section. Every count is a number of successful requests. */
export interface ResponsesSection {
  /** Successful requests. */
  successful: number;
  /**
   * Successful requests of a streaming run that the server answered with one whole body instead of
   * an event stream: they have no streaming metric (TTFT, ITL, chunk gaps, …).
   */
  not_streamed: number;
  /** Successful requests whose answer carried a `usage` object. */
  with_usage: number;
  /** Successful requests whose answer carried no `usage` object. */
  without_usage: number;
  /** Where their ISL came from: the server's `usage.prompt_tokens`, or the prompt tokenload built. */
  isl_from: { server_usage: number; client_prompt: number };
  /** Where their OSL came from: `usage.completion_tokens`, the client tokenizer, or one token per content chunk. */
  osl_from: { server_usage: number; client_tokenizer: number; content_chunks: number };
}

/** Counts the {@link ResponsesSection} of the records added. */
export class ResponseChecks {
  private readonly counts: ResponsesSection = {
    successful: 0,
    not_streamed: 0,
    with_usage: 0,
    without_usage: 0,
    isl_from: { server_usage: 0, client_prompt: 0 },
    osl_from: { server_usage: 0, client_tokenizer: 0, content_chunks: 0 },
  };

  /** Folds in one record; failed ones are not counted. */
  add(record: LineRecord): void {
    if (!record.valid) return;
    const c = this.counts;
    c.successful++;
    if (record.notStreamed === true) c.not_streamed++;
    if (record.raw.usage === null) c.without_usage++;
    else c.with_usage++;
    if (record.islSource !== undefined) c.isl_from[record.islSource]++;
    c.osl_from[record.oslSource]++;
  }

  /** A copy of the counts so far. */
  section(): ResponsesSection {
    return structuredClone(this.counts);
  }
}

/** What the warnings need to know about the run. */
export interface ResponseWarningContext {
  /** `--use-server-token-count`. */
  useServerTokenCount: boolean;
  /** How the run asked for usage (e.g. `stream_options.include_usage`), or null when it is sent unasked. */
  usageAskedWith: string | null;
}

/** Streaming metrics a whole-body answer cannot give (their tags). */
const STREAMING_TAGS = 'time_to_first_token, time_to_second_token, inter_token_latency, inter_chunk_latency';

/** The warning for answers that were not streamed; null when every answer was. */
function notStreamedWarning(s: ResponsesSection): string | null {
  const n = s.not_streamed;
  if (n === 0) return null;
  const who =
    n === s.successful
      ? `the server ignored stream: true: all ${n} successful requests were answered with one JSON body, not an event stream`
      : `the server ignored stream: true for ${n} of ${s.successful} successful requests: they were answered with one JSON body, not an event stream`;
  const rest =
    n === s.successful
      ? 'so no streaming metric exists for this run'
      : `so the streaming metrics cover only the other ${s.successful - n}`;
  return `${who}. Their streaming metrics (${STREAMING_TAGS}, …) are not reported, ${rest}; their request_latency is the whole body's arrival, and their ISL, OSL and throughput still count (metadata response_streamed: false in profile_export.jsonl).`;
}

/** The OSL counts used for requests without usage, in words. */
function clientOslWords(s: ResponsesSection): string {
  const { client_tokenizer: tokenizer, content_chunks: chunks } = s.osl_from;
  if (chunks === 0) return "OSL is the client tokenizer's count of the output text";
  if (tokenizer === 0) return 'OSL is the number of content chunks (one token each)';
  return `OSL is the client tokenizer's count of the output text (${tokenizer}) or the number of content chunks (${chunks})`;
}

/** The warning for answers without `usage`; null when every successful answer had one. */
function usageWarning(s: ResponsesSection, ctx: ResponseWarningContext): string | null {
  const n = s.without_usage;
  if (n === 0) return null;
  const asked = ctx.usageAskedWith === null ? '' : ` although it was asked for (${ctx.usageAskedWith})`;
  const all = n === s.successful;
  const who = all
    ? `the server sent no usage with any of the ${n} successful requests${asked}`
    : `${n} of ${s.successful} successful requests came without usage${asked}`;
  const isl =
    ctx.useServerTokenCount && s.isl_from.client_prompt > 0
      ? `; --use-server-token-count could not apply to ${s.isl_from.client_prompt}: their ISL is the length of the prompt tokenload built`
      : '';
  const counts = `for ${all ? 'them' : `the ${n} without usage`}, ${clientOslWords(s)}${ctx.useServerTokenCount ? '' : ' and ISL the length of the prompt tokenload built'}`;
  const serverCounts = ctx.useServerTokenCount
    ? 'OSL and ISL from usage'
    : 'OSL from usage.completion_tokens';
  const others = all ? '' : `; the ${s.with_usage} with usage have the server's counts (${serverCounts})`;
  return `${who}: ${counts}${isl}${others} (the summary's responses section counts where each came from).`;
}

/**
 * `--use-server-token-count` with usage on every answer, but without `prompt_tokens` on some: their
 * ISL fell back to the client count. Null when it applied to every request, or when
 * {@link usageWarning} already says so.
 */
function serverIslWarning(s: ResponsesSection, ctx: ResponseWarningContext): string | null {
  const n = s.isl_from.client_prompt;
  if (!ctx.useServerTokenCount || n === 0 || s.without_usage > 0) return null;
  return `--use-server-token-count could not apply to ${n} of ${s.successful} successful requests: their usage had no prompt_tokens, so their ISL is the length of the prompt tokenload built.`;
}

/** The run's warnings about its answers: at most one per kind, with counts. */
export function responseWarnings(s: ResponsesSection, ctx: ResponseWarningContext): string[] {
  const found = [notStreamedWarning(s), usageWarning(s, ctx), serverIslWarning(s, ctx)];
  return found.filter((w): w is string => w !== null);
}
