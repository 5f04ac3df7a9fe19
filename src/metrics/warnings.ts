/**
 * Run-level warnings shown under the console table and stored in the summary JSON.
 */
import type { RunTotals } from './types.js';

/**
 * Warning texts for OSL mismatches, usage discrepancies, reasoning cut by max tokens, an ITL that
 * could not use `--per-chunk-usage` and a server TTFT longer than the client's; empty when there is
 * nothing to say.
 */
export function runWarnings(t: RunTotals): string[] {
  const warnings: string[] = [];
  if (t.oslShortCount > 0) {
    warnings.push(
      `${t.oslShortCount} of ${t.validCount} requests returned fewer output tokens than the requested max ` +
        'tokens, by more than min(5%, 50 tokens); the server probably stopped at EOS. To force exact lengths ' +
        'pass --extra-inputs ignore_eos:true (or min_tokens:<n> if the server supports it).',
    );
  }
  if (t.oslLongCount > 0) {
    warnings.push(
      `${t.oslLongCount} of ${t.validCount} requests returned more output tokens (the server's ` +
        'usage.completion_tokens) than the requested max tokens, by more than min(5%, 50 tokens); the server ' +
        'ignored the max tokens sent: check which field it reads (max_tokens, max_completion_tokens).',
    );
  }
  if (t.usageDiscrepancyCount > 0) {
    warnings.push(
      `${t.usageDiscrepancyCount} of ${t.validCount} requests have a server usage.prompt_tokens further ` +
        'from the client count than max(10%, 8 tokens) beyond the overhead learned for their message layout ' +
        '(chat template, or prompt joiners; see usage_check); check that --tokenizer matches the served model.',
    );
  }
  if (t.lengthWithoutOutputCount > 0) {
    warnings.push(
      `${t.lengthWithoutOutputCount} of ${t.validCount} requests hit max tokens (finish_reason "length") while ` +
        'still reasoning, with no visible answer; raise the output length if answers matter.',
    );
  }
  if (t.itlPerChunkFallbackCount > 0) {
    warnings.push(
      `${t.itlPerChunkFallbackCount} of ${t.validCount} requests had no running usage count in (0, OSL) on ` +
        'their first content chunk, so --per-chunk-usage could not apply: their inter_token_latency divides ' +
        'by OSL − 1. Check that the server honours stream_options.continuous_usage_stats.',
    );
  }
  if (t.serverTtftAboveClientCount > 0) {
    warnings.push(
      `${t.serverTtftAboveClientCount} of ${t.validCount} requests report a server TTFT (server_ttft_ms) ` +
        "longer than the client's own TTFT, which cannot be: the server counts from an earlier point or its " +
        'clock runs at another rate. client_overhead_ms leaves them out; read their server timing with care.',
    );
  }
  if (t.serverTimingInvalidCount > 0) {
    warnings.push(
      `${t.serverTimingInvalidCount} of ${t.validCount} requests carried server timing that is not a duration or count ` +
        `(e.g. ${t.serverTimingInvalidExample}): those fields are not used, so the server_* metrics and ` +
        'client_overhead_ms rest on fewer requests; check the server version that sends them.',
    );
  }
  return warnings;
}
