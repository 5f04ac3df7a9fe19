/**
 * Server `usage` metrics and client/server discrepancy metrics (AIPerf metric reference, "Usage
 * Field Metrics" and "OSL Mismatch"). Values are the last non-null `usage` object of the response.
 */
import type { RecordMetricDef, RecordMetricInput } from '../metric-types.js';

type UsageField = (input: RecordMetricInput) => number | undefined;

function usageMetric(tag: string, header: string, order: number, read: UsageField): RecordMetricDef {
  return {
    tag,
    header,
    unit: 'tokens',
    kind: 'record',
    flags: { noConsole: true },
    displayOrder: order,
    compute: read,
  };
}

/** Usage Prompt Tokens, tokens: `usage.prompt_tokens`. AIPerf `usage_prompt_tokens`. */
export const usagePromptTokens = usageMetric(
  'usage_prompt_tokens',
  'Usage Prompt Tokens',
  1400,
  ({ raw }) => raw.usage?.prompt_tokens,
);

/** Usage Completion Tokens, tokens: `usage.completion_tokens`. AIPerf `usage_completion_tokens`. */
export const usageCompletionTokens = usageMetric(
  'usage_completion_tokens',
  'Usage Completion Tokens',
  1410,
  ({ raw }) => raw.usage?.completion_tokens,
);

/** Usage Cached Tokens, tokens: `usage.prompt_tokens_details.cached_tokens`. AIPerf `usage_cached_tokens`. */
export const usageCachedTokens = usageMetric(
  'usage_cached_tokens',
  'Usage Cached Tokens',
  1420,
  ({ raw }) => raw.usage?.prompt_tokens_details?.cached_tokens ?? undefined,
);

/**
 * Ideal Cached Tokens, tokens (ours): the prompt tokens an ideal prefix cache would hold when the
 * request was sent (`RawRecord.idealCachedTokens`), beside the server's `usage_cached_tokens`.
 */
export const idealCachedTokens = usageMetric(
  'ideal_cached_tokens',
  'Ideal Cached Tokens',
  1425,
  ({ raw }) => raw.idealCachedTokens,
);

/**
 * Usage Reasoning Tokens, tokens: `usage.completion_tokens_details.reasoning_tokens`.
 * AIPerf `usage_reasoning_tokens`.
 */
export const usageReasoningTokens = usageMetric(
  'usage_reasoning_tokens',
  'Usage Reasoning Tokens',
  1430,
  ({ raw }) => raw.usage?.completion_tokens_details?.reasoning_tokens ?? undefined,
);

/** |server − client| / client · 100, or undefined when either is missing or the client count is 0. */
export function diffPct(server: number | undefined, client: number | undefined): number | undefined {
  if (server === undefined || client === undefined || client === 0) return undefined;
  return (Math.abs(server - client) / client) * 100;
}

function diffMetric(tag: string, header: string, order: number, pick: UsageField): RecordMetricDef {
  return {
    tag,
    header,
    unit: '%',
    kind: 'record',
    flags: { noConsole: true },
    displayOrder: order,
    compute: pick,
  };
}

/**
 * Usage Prompt Tokens Diff, %: |usage.prompt_tokens − client ISL| / client ISL · 100.
 * AIPerf `usage_prompt_tokens_diff_pct`.
 */
export const usagePromptTokensDiffPct = diffMetric(
  'usage_prompt_tokens_diff_pct',
  'Usage Prompt Tokens Diff',
  1440,
  ({ raw, tokens }) => diffPct(raw.usage?.prompt_tokens, tokens.clientIsl),
);

/**
 * Usage Completion Tokens Diff, %: |usage.completion_tokens − client OSL| / client OSL · 100, the
 * client OSL being the tokenizer count (needs a tokenizer). AIPerf `usage_completion_tokens_diff_pct`.
 */
export const usageCompletionTokensDiffPct = diffMetric(
  'usage_completion_tokens_diff_pct',
  'Usage Completion Tokens Diff',
  1450,
  ({ raw, tokens }) => diffPct(raw.usage?.completion_tokens, tokens.clientOsl),
);

/**
 * OSL Mismatch Diff, %: (OSL − requested max tokens) / requested · 100 (signed; negative when the
 * server stopped early). AIPerf `osl_mismatch_diff_pct`.
 */
export const oslMismatchDiffPct = diffMetric(
  'osl_mismatch_diff_pct',
  'OSL Mismatch Diff',
  1460,
  ({ raw, tokens }) => {
    const requested = raw.requestedOutputTokens;
    if (requested === null || requested <= 0 || tokens.osl === undefined) return undefined;
    return ((tokens.osl - requested) / requested) * 100;
  },
);
