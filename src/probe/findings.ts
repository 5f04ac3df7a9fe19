/**
 * Every finding of a probe ({@link ProbeFindings}), from the answers it got. Generation findings
 * come from findings-stream.ts, route findings from findings-routes.ts; this file adds the ones that
 * need several answers (template overhead, prefix-cache reporting) and puts them in table order.
 */
import type { EndpointAdapter } from '../endpoint/types.js';
import type { ExchangeResult } from './exchange.js';
import { keepAliveFinding, metricsFinding, modelsFinding, tokenizeFinding } from './findings-routes.js';
import {
  continuousFinding,
  errorFormatFinding,
  factsOf,
  failure,
  openAiChunks,
  reasoningFinding,
  roleFinding,
  streamingFinding,
  tokensFinding,
  toolsFinding,
  unknown,
  usageFinding,
} from './findings-stream.js';
import type { IdleResult } from './keep-alive.js';
import type { ProbeFindings } from './types.js';

/** Every answer the probe got; null for a request not sent (not applicable, or skipped). */
export interface ProbeExchanges {
  models: ExchangeResult;
  metrics: ExchangeResult;
  tokenize: ExchangeResult;
  /** The streamed request (include_usage). */
  stream: ExchangeResult | null;
  /** The streamed request with continuous usage. */
  continuous: ExchangeResult | null;
  /** The same prompt, not streamed. */
  whole: ExchangeResult | null;
  tools: ExchangeResult | null;
  /** Max tokens 0, streamed. */
  bad: ExchangeResult | null;
  idle: IdleResult | null;
  /** Why the generation requests after the first were not sent; null when they were. */
  skipped: string | null;
}

/** What the findings need beside the answers. */
export interface ProbeContext {
  adapter: EndpointAdapter;
  model: string;
  /** The client tokenizer's count of the probe's user message. */
  clientTokens: number;
  /** The client tokenizer's name. */
  tokenizer: string;
  /** Seconds the idle connection was watched (0 = not watched). */
  idleS: number;
  /** Output tokens asked of each request. */
  maxTokens: number;
}

/** The server's prompt tokens for the one-message prompt, from the first answer that has them. */
function promptTokens(ex: ProbeExchanges): number | null {
  for (const r of [ex.stream, ex.continuous, ex.whole]) {
    const n = r?.record?.error === null ? r.record.usage?.prompt_tokens : undefined;
    if (typeof n === 'number') return n;
  }
  return null;
}

function overheadFinding(ctx: ProbeContext, ex: ProbeExchanges): ProbeFindings['template_overhead'] {
  const prompt = promptTokens(ex);
  if (prompt === null) return unknown('unknown: no answer carried usage.prompt_tokens');
  const overhead = prompt - ctx.clientTokens;
  const what = ctx.adapter.name === 'chat' ? 'a one-message chat' : 'the prompt';
  return {
    value: { prompt_tokens: prompt, client_tokens: ctx.clientTokens, overhead_tokens: overhead },
    text: `${overhead} tokens: the server counts ${prompt} prompt tokens for ${what} of ${ctx.clientTokens} tokens (${ctx.tokenizer})`,
  };
}

/** Earlier answered requests with the same prompt as the non-streamed one. */
function repeats(ex: ProbeExchanges): number {
  return [ex.stream, ex.continuous].filter((r) => r?.status === 200).length;
}

function cacheFinding(ex: ProbeExchanges): ProbeFindings['prefix_cache_reporting'] {
  const r = ex.whole;
  if (r === null || r.status !== 200 || r.record?.usage === null || r.record === null)
    return unknown(r === null ? 'not sent' : `unknown: ${failure(r)}`);
  const usage = r.record.usage;
  const cached = usage.prompt_tokens_details?.cached_tokens;
  const prompt = usage.prompt_tokens ?? null;
  if (typeof cached !== 'number')
    return {
      value: { cached_tokens: null, prompt_tokens: prompt },
      text: 'not reported (no prompt_tokens_details.cached_tokens)',
    };
  const sent = repeats(ex);
  const when = sent === 0 ? 'on a first send' : `on the prompt's ${sent === 1 ? 'second' : 'third'} send`;
  const zero = cached === 0 && sent > 0 ? ' (prefix caching off, or blocks longer than the prompt)' : '';
  return {
    value: { cached_tokens: cached, prompt_tokens: prompt },
    text: `${cached} of ${prompt ?? '?'} prompt tokens cached ${when}${zero}`,
  };
}

function wholeUsageFinding(ex: ProbeExchanges): ProbeFindings['non_streamed_usage'] {
  const r = ex.whole;
  if (r === null) return unknown('not sent');
  if (r.status !== 200 || r.record === null || r.record.error !== null)
    return unknown(`unknown: ${failure(r)}`);
  const u = r.record.usage;
  return u === null
    ? { value: false, text: 'no usage in the JSON body' }
    : {
        value: true,
        text: `yes (prompt ${u.prompt_tokens ?? '?'}, completion ${u.completion_tokens ?? '?'})`,
      };
}

/** The plain streamed request succeeded: a variant of it that failed was refused for what it added. */
function plainOk(ex: ProbeExchanges): boolean {
  return ex.stream?.status === 200 && ex.stream.record?.error === null;
}

/** The findings that need the streamed answers; all unknown when they were skipped. */
function streamFindings(
  ctx: ProbeContext,
  ex: ProbeExchanges,
): Pick<
  ProbeFindings,
  | 'streaming'
  | 'role_only_first_chunk'
  | 'usage'
  | 'continuous_usage'
  | 'reasoning_field'
  | 'tokens_per_chunk'
> {
  const chat = ctx.adapter.name === 'chat';
  const r = ex.stream;
  if (r === null) {
    const na = unknown<never>(`n/a: ${ctx.adapter.name} does not stream`);
    return {
      streaming: na,
      role_only_first_chunk: na,
      usage: na,
      continuous_usage: na,
      reasoning_field: na,
      tokens_per_chunk: na,
    };
  }
  const f = factsOf(ctx.adapter, r);
  const skipped = ex.skipped === null ? null : unknown<never>(`skipped: ${ex.skipped}`);
  return {
    streaming: streamingFinding(r, f, openAiChunks(ctx.adapter)),
    role_only_first_chunk: roleFinding(f, chat),
    usage: usageFinding(r, f, openAiChunks(ctx.adapter)),
    continuous_usage:
      skipped ?? continuousFinding(ex.continuous, factsOf(ctx.adapter, ex.continuous), plainOk(ex)),
    reasoning_field: reasoningFinding(r, f, chat, ctx.maxTokens),
    tokens_per_chunk: tokensFinding(f, factsOf(ctx.adapter, ex.continuous)),
  };
}

/** Every finding, in table order. */
export function deriveFindings(ctx: ProbeContext, ex: ProbeExchanges): ProbeFindings {
  const skipped = ex.skipped === null ? null : unknown<never>(`skipped: ${ex.skipped}`);
  const answered = [ex.stream, ex.whole].some((r) => r?.status === 200 && r.record?.error === null);
  return {
    ...streamFindings(ctx, ex),
    tool_call_streaming: skipped ?? toolsFinding(ex.tools, ctx.adapter, plainOk(ex)),
    error_format: skipped ?? errorFormatFinding(ex.bad, ctx.adapter),
    non_streamed_usage: skipped ?? wholeUsageFinding(ex),
    prefix_cache_reporting: skipped ?? cacheFinding(ex),
    template_overhead: overheadFinding(ctx, ex),
    models_route: modelsFinding(ex.models, ctx.model, answered),
    metrics_route: metricsFinding(ex.metrics),
    tokenize_route: tokenizeFinding(ex.tokenize, ctx.clientTokens),
    keep_alive: keepAliveFinding(ex.models, ex.idle, ctx.idleS),
  };
}
