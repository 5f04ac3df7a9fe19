/**
 * The usage check: does the server count the prompt as the client does? A chat server's
 * `usage.prompt_tokens` is the prompt plus its chat template's tokens, a constant for a given
 * message layout (ChatML: 5 per message and 3 for the assistant turn it opens). So the overhead
 * (server prompt tokens − client count of every message sent) is learned per layout from the run
 * itself, and a request counts as a discrepancy only when its own overhead is further from its
 * layout's than {@link USAGE_DISCREPANCY_PCT} % of its prompt or {@link USAGE_DISCREPANCY_MIN_TOKENS}
 * tokens, whichever is more: the sign of a `--tokenizer` that does not match the served model.
 *
 * Learned overhead of a layout = the median (numpy linear) of its requests' overheads, and never
 * below 0 (a template only adds tokens: a server counting fewer tokens than the client is a tokenizer
 * mismatch, not a template). A layout with fewer than {@link MIN_LAYOUT_REQUESTS} requests teaches
 * nothing and its requests are left unchecked. Limit: a mismatched tokenizer that shifts every
 * prompt of a layout by the same number of tokens (prompts of one length) looks like a template; the
 * learned overhead is printed so that a number far above a template's few tokens is seen.
 */
import type { ProcessedRecord } from '../record/types.js';
import { percentileSorted } from './stats.js';

/** A request is discrepant when it is off its layout's overhead by more than this % of its prompt… */
export const USAGE_DISCREPANCY_PCT = 10;
/** …and by more than this many tokens. */
export const USAGE_DISCREPANCY_MIN_TOKENS = 8;
/** Requests a layout needs before its overhead is learned and its requests are checked. */
export const MIN_LAYOUT_REQUESTS = 3;

/** One message layout of `usage_check.per_layout`. Tokens are server tokens − client tokens. */
export interface UsageLayoutSummary {
  /** Roles with counts, e.g. `user×1` (record field `promptLayout`). */
  layout: string;
  requests: number;
  /** The learned overhead; null when the layout has fewer than {@link MIN_LAYOUT_REQUESTS} requests. */
  overhead_tokens: number | null;
  min_overhead_tokens: number;
  max_overhead_tokens: number;
  /** Largest |overhead − learned overhead| of its requests; null when not learned. */
  max_deviation_tokens: number | null;
  /** Requests beyond the discrepancy rule. */
  discrepant: number;
}

/** `usage_check` of the summary: the server's prompt counts against the client's, after the template. */
export interface UsageCheckSummary {
  /** Successful requests with both a client count of the prompt sent and `usage.prompt_tokens`. */
  requests_compared: number;
  /** Of those, requests in layouts too rare to learn from. */
  requests_unchecked: number;
  /** Requests beyond the discrepancy rule (`usage_discrepancy_count`). */
  discrepant: number;
  /** The learned overhead of the most frequent learned layout; null when no layout was learned. */
  template_overhead_tokens: number | null;
  /** Every layout, most requests first. */
  per_layout: UsageLayoutSummary[];
}

interface LayoutValues {
  client: number[];
  overhead: number[];
}

function layoutSummary(layout: string, v: LayoutValues): UsageLayoutSummary {
  const sorted = Float64Array.from(v.overhead).sort();
  const n = sorted.length;
  const range = { min_overhead_tokens: sorted[0] as number, max_overhead_tokens: sorted[n - 1] as number };
  if (n < MIN_LAYOUT_REQUESTS) {
    return {
      layout,
      requests: n,
      overhead_tokens: null,
      ...range,
      max_deviation_tokens: null,
      discrepant: 0,
    };
  }
  const learned = Math.max(0, percentileSorted(sorted, 50));
  let maxDeviation = 0;
  let discrepant = 0;
  for (let i = 0; i < n; i++) {
    const deviation = Math.abs((v.overhead[i] as number) - learned);
    maxDeviation = Math.max(maxDeviation, deviation);
    const allowed = Math.max(
      (USAGE_DISCREPANCY_PCT / 100) * (v.client[i] as number),
      USAGE_DISCREPANCY_MIN_TOKENS,
    );
    if (deviation > allowed) discrepant++;
  }
  return {
    layout,
    requests: n,
    overhead_tokens: learned,
    ...range,
    max_deviation_tokens: maxDeviation,
    discrepant,
  };
}

/** Collects the successful requests' prompt counts by layout; {@link UsageCheck.result} judges them. */
export class UsageCheck {
  private readonly layouts = new Map<string, LayoutValues>();

  /** Folds in one record (successful ones with both counts and a layout; others are skipped). */
  add(record: ProcessedRecord): void {
    const { raw } = record;
    const server = raw.usage?.prompt_tokens;
    const client = raw.sentPromptTokens;
    if (!record.valid || server === undefined || client === undefined || raw.promptLayout === undefined)
      return;
    let values = this.layouts.get(raw.promptLayout);
    if (values === undefined) {
      values = { client: [], overhead: [] };
      this.layouts.set(raw.promptLayout, values);
    }
    values.client.push(client);
    values.overhead.push(server - client);
  }

  /** The check of the records added so far; null when no request could be compared. */
  result(): UsageCheckSummary | null {
    if (this.layouts.size === 0) return null;
    const perLayout = [...this.layouts].map(([layout, v]) => layoutSummary(layout, v));
    perLayout.sort((a, b) => b.requests - a.requests);
    const learned = perLayout.find((l) => l.overhead_tokens !== null);
    let compared = 0;
    let unchecked = 0;
    let discrepant = 0;
    for (const l of perLayout) {
      compared += l.requests;
      if (l.overhead_tokens === null) unchecked += l.requests;
      discrepant += l.discrepant;
    }
    return {
      requests_compared: compared,
      requests_unchecked: unchecked,
      discrepant,
      template_overhead_tokens: learned?.overhead_tokens ?? null,
      per_layout: perLayout,
    };
  }
}

/** At most this many layouts are named on the console line. */
const LINE_LAYOUTS = 3;

/**
 * The console line of the check, e.g. `Usage check: chat template overhead learned from
 * usage.prompt_tokens: 8 tokens for user×1 (40 requests); 0 of 40 requests disagree with it beyond
 * max(10 %, 8 tokens)`; null when nothing was compared.
 */
export function usageCheckLine(u: UsageCheckSummary | null): string | null {
  if (u === null) return null;
  const learned = u.per_layout.filter((l) => l.overhead_tokens !== null);
  if (learned.length === 0) {
    return `Usage check: no message layout had ${MIN_LAYOUT_REQUESTS} requests to learn a chat template overhead from (${u.requests_compared} requests unchecked)`;
  }
  const named = learned
    .slice(0, LINE_LAYOUTS)
    .map((l) => `${l.overhead_tokens} tokens for ${l.layout} (${l.requests} requests)`);
  if (learned.length > LINE_LAYOUTS) named.push(`${learned.length - LINE_LAYOUTS} more layouts`);
  const unchecked = u.requests_unchecked > 0 ? `; ${u.requests_unchecked} in rarer layouts unchecked` : '';
  return (
    `Usage check: chat template overhead learned from usage.prompt_tokens: ${named.join(', ')}; ` +
    `${u.discrepant} of ${u.requests_compared - u.requests_unchecked} requests disagree with it beyond ` +
    `max(${USAGE_DISCREPANCY_PCT} %, ${USAGE_DISCREPANCY_MIN_TOKENS} tokens)${unchecked}`
  );
}
