/**
 * Per-record token metrics (AIPerf metric reference, "Token Based Metrics" and "Reasoning Metrics").
 * Counts come from `record/tokens.ts` (`countTokens`), which states which source wins.
 */
import type { RecordMetricDef } from '../metric-types.js';

/** Input Sequence Length, tokens. AIPerf `input_sequence_length`. */
export const inputSequenceLength: RecordMetricDef = {
  tag: 'input_sequence_length',
  header: 'Input Sequence Length',
  unit: 'tokens',
  kind: 'record',
  flags: {},
  displayOrder: 700,
  compute: ({ tokens }) => tokens.isl,
};

/**
 * Turn Input Sequence Length, tokens (ours): the turn's own prompt, without the history a multi-turn
 * context mode re-sends in front of it. Present only when history was sent, so ISL (the whole
 * request, as AIPerf counts it since 2026) and the turn's own share can be told apart.
 */
export const turnInputSequenceLength: RecordMetricDef = {
  tag: 'turn_input_sequence_length',
  header: 'Turn Input Sequence Length',
  unit: 'tokens',
  kind: 'record',
  flags: { noConsole: true },
  displayOrder: 702,
  compute: ({ raw }) =>
    raw.sentPromptTokens === undefined || raw.inputTokens === null || raw.sentPromptTokens === raw.inputTokens
      ? undefined
      : raw.inputTokens,
};

/**
 * Input Text Tokens, tokens (ours; only with `--apply-chat-template`): the client tokenizer's count
 * of the turn's own message texts, without the chat template (ISL without the flag).
 */
export const inputTextTokens: RecordMetricDef = {
  tag: 'input_text_tokens',
  header: 'Input Text Tokens',
  unit: 'tokens',
  kind: 'record',
  flags: { noConsole: true },
  displayOrder: 705,
  compute: ({ raw }) => raw.textInputTokens,
};

/**
 * Input Templated Tokens, tokens (ours; only with `--apply-chat-template`): the client tokenizer's
 * count of the turn's own messages rendered through the chat template with the generation prompt,
 * as the server counts `usage.prompt_tokens` (ISL with the flag, unless `--use-server-token-count`).
 */
export const inputTemplatedTokens: RecordMetricDef = {
  tag: 'input_templated_tokens',
  header: 'Input Templated Tokens',
  unit: 'tokens',
  kind: 'record',
  flags: { noConsole: true },
  displayOrder: 706,
  compute: ({ raw }) => (raw.textInputTokens === undefined ? undefined : (raw.inputTokens ?? undefined)),
};

/** Output Sequence Length, tokens: output plus reasoning tokens. AIPerf `output_sequence_length`. */
export const outputSequenceLength: RecordMetricDef = {
  tag: 'output_sequence_length',
  header: 'Output Sequence Length',
  unit: 'tokens',
  kind: 'record',
  flags: {},
  displayOrder: 600,
  compute: ({ tokens }) => tokens.osl,
};

/**
 * Reasoning Token Count, tokens: reasoning part of OSL; omitted when the response had no reasoning.
 * AIPerf `reasoning_token_count`.
 */
export const reasoningTokenCount: RecordMetricDef = {
  tag: 'reasoning_token_count',
  header: 'Reasoning Token Count',
  unit: 'tokens',
  kind: 'record',
  flags: {},
  displayOrder: 620,
  compute: ({ tokens }) => tokens.reasoning,
};

/**
 * Output Token Count, tokens: OSL − reasoning, clamped at 0; a 0 is treated as missing (AIPerf
 * `output_token_count`).
 */
export const outputTokenCount: RecordMetricDef = {
  tag: 'output_token_count',
  header: 'Output Token Count',
  unit: 'tokens',
  kind: 'record',
  flags: {},
  displayOrder: 610,
  compute: ({ tokens }) => {
    if (tokens.osl === undefined) return undefined;
    const output = Math.max(0, tokens.osl - (tokens.reasoning ?? 0));
    return output === 0 ? undefined : output;
  },
};

/** Error ISL, tokens: ISL of a failed request (only failed records get it). AIPerf `error_isl`. */
export const errorIsl: RecordMetricDef = {
  tag: 'error_isl',
  header: 'Error Input Sequence Length',
  unit: 'tokens',
  kind: 'record',
  flags: { errorOnly: true, noConsole: true },
  displayOrder: 1300,
  compute: ({ tokens }) => tokens.isl,
};
