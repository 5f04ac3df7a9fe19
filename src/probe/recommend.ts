/**
 * The tokenload flags a probe's findings call for, each with the finding that calls for it, and the
 * advice that needs no flag. Only flags `tokenload profile` has.
 */
import type { ProbeContext } from './findings.js';
import { errorText } from './findings-stream.js';
import type { ProbeFindings, Recommendation, RecordedError } from './types.js';

function streamingAdvice(f: ProbeFindings): Recommendation[] {
  if (f.streaming.value === 'event_stream')
    return [
      { flag: '--streaming', reason: 'the endpoint streams: TTFT, ITL and inter-chunk latency need it' },
    ];
  if (f.streaming.value === 'json_body')
    return [
      {
        flag: null,
        reason:
          'stream requests are answered with one JSON body: run without --streaming (no TTFT or ITL can be measured)',
      },
    ];
  return [];
}

function usageAdvice(f: ProbeFindings, ctx: ProbeContext): Recommendation[] {
  const out: Recommendation[] = [];
  if (f.continuous_usage.value === 'running')
    out.push({
      flag: '--per-chunk-usage',
      reason:
        "the server sends running usage on each chunk: ITL then divides by OSL minus the first chunk's own tokens, not OSL − 1 (they differ when a chunk carries several tokens)",
    });
  const overhead = f.template_overhead.value?.overhead_tokens ?? 0;
  const serverCount = f.tokenize_route.value?.count ?? null;
  const mismatch = serverCount !== null && serverCount !== ctx.clientTokens;
  const hasUsage = f.usage.value?.present === true || f.non_streamed_usage.value === true;
  if (hasUsage && (overhead !== 0 || mismatch))
    out.push({
      flag: '--use-server-token-count',
      reason: `the server's prompt count differs from the client's (${overhead !== 0 ? `${overhead} tokens of chat template` : 'another tokenizer'}): ISL and OSL from its usage count what it processed`,
    });
  if (overhead > 0 && ctx.adapter.chatTemplated)
    out.push({
      flag: '--apply-chat-template',
      reason: `the server adds ${overhead} tokens of chat template to a one-message prompt: with the flag ISL counts the templated prompt as the server does, so a trace row's input_length is what the server counts`,
    });
  const noUsage = f.usage.value?.present === false && f.non_streamed_usage.value !== true;
  if (noUsage)
    out.push({
      flag: '--tokenizer',
      reason:
        "the answers carry no usage: OSL is counted with the client tokenizer, so give it the model's own (its Hugging Face model id, model folder or tokenizer.json)",
    });
  if (mismatch)
    out.push({
      flag: '--tokenizer',
      reason: `the server counts the probe text as ${serverCount} tokens, the client tokenizer (${ctx.tokenizer}) as ${ctx.clientTokens}: give it the model's own tokenizer`,
    });
  return out;
}

function connectionAdvice(f: ProbeFindings): Recommendation[] {
  const closed = f.keep_alive.value?.closed_after_s ?? null;
  if (closed === null) return [];
  if (closed < 0.5)
    return [
      {
        flag: null,
        reason:
          'the server closes the connection after each answer: every request waits for a new one (its connection_wait, part of schedule_lag)',
      },
    ];
  return [
    {
      flag: null,
      reason: `the server closes idle connections after about ${closed} s: a request after a longer quiet gap waits for a new one (its connection_wait)`,
    },
  ];
}

function otherAdvice(
  f: ProbeFindings,
  ctx: ProbeContext,
  firstFailure: RecordedError | null,
): Recommendation[] {
  const out: Recommendation[] = [];
  const models = f.models_route.value;
  const notFound = firstFailure?.kind === 'http_status' && firstFailure.code === 404;
  if (models?.listed === false && notFound)
    out.push({
      flag: '--model',
      reason: `${ctx.model} is not served here; the server lists ${models.served.join(', ')}`,
    });
  else if (firstFailure !== null)
    out.push({
      flag: null,
      reason: `the first generation request failed (${errorText(firstFailure)}); a run records such answers as errors`,
    });
  const perChunk = f.tokens_per_chunk.value;
  if (perChunk !== null && perChunk.avg > 1.05 && f.continuous_usage.value !== 'running')
    out.push({
      flag: null,
      reason: `chunks carry about ${perChunk.avg.toFixed(1)} tokens: ITL is per token (spread over each chunk), inter_chunk_latency per chunk`,
    });
  return out;
}

/**
 * The recommendations of `f`, most important first; `firstFailure` is how the first generation
 * request failed (null when it succeeded).
 */
export function recommend(
  f: ProbeFindings,
  ctx: ProbeContext,
  firstFailure: RecordedError | null,
): Recommendation[] {
  return [
    ...streamingAdvice(f),
    ...usageAdvice(f, ctx),
    ...otherAdvice(f, ctx, firstFailure),
    ...connectionAdvice(f),
  ];
}
