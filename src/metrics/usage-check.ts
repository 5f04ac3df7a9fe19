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
 * prompt of a layout by the same number of tokens (prompts of one length) looks like a template, so a
 * learned overhead above {@link implausibleOverheadTokens} (more than any chat template adds per
 * message, and a large share of the prompt) is warned about as a probable tokenizer mismatch.
 *
 * In a run with several servers (`--url` more than once), each server learns its own overheads: replicas
 * may run different templates, and one figure for both would hide both (8 and 0 tokens read as 4,
 * within the tolerance of each).
 *
 * On an endpoint that sends a plain prompt (completions, TGI generate) the server applies no chat
 * template: what is learned is the prompt's own extra tokens (a BOS token, the blank lines that join
 * a multi-turn history into one prompt), and the wording says so ({@link UsageCheckSummary.overhead_of}).
 */
import type { LineRecord } from '../record/types.js';
import { percentileSorted } from './stats.js';

/** A request is discrepant when it is off its layout's overhead by more than this % of its prompt… */
export const USAGE_DISCREPANCY_PCT = 10;
/** …and by more than this many tokens. */
export const USAGE_DISCREPANCY_MIN_TOKENS = 8;
/** Requests a layout needs before its overhead is learned and its requests are checked. */
export const MIN_LAYOUT_REQUESTS = 3;
/**
 * Most tokens a chat template plausibly adds per message (ChatML adds 5 per message and 3 for the
 * assistant turn; a Llama 3 template about 5 per message and its default system header about 25).
 */
export const TEMPLATE_MAX_TOKENS_PER_MESSAGE = 32;
/** A template is a constant: an overhead above this % of the layout's median prompt grows with it. */
export const TEMPLATE_MAX_PROMPT_PCT = 50;

/** What the learned overhead is made of: a server-side chat template, or a plain prompt's own extras. */
export type OverheadOf = 'chat_template' | 'prompt_joiners';

const OVERHEAD_NAME: Record<OverheadOf, string> = {
  chat_template: 'chat template overhead',
  prompt_joiners: 'prompt template/joiner overhead',
};

/**
 * One message layout of `usage_check.per_layout`, learned on one server. Tokens are server tokens −
 * client tokens.
 */
export interface UsageLayoutSummary {
  /** Roles with counts, e.g. `user×1` (record field `promptLayout`). */
  layout: string;
  /**
   * The server the layout was learned on (`--url`, normalized), present only in a run with several
   * servers: replicas may template differently (one 8 tokens, another 0), so each learns its own.
   */
  server?: string;
  requests: number;
  /** Median (numpy linear) client count of the prompts sent in this layout, history included. */
  median_prompt_tokens: number;
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
  /**
   * `chat_template` (chat, responses: the server templates the messages) or `prompt_joiners`
   * (completions, huggingface_generate: a plain prompt, whose overhead is a BOS token or the joiners
   * of a multi-turn history).
   */
  overhead_of: OverheadOf;
  /** Every layout, most requests first. */
  per_layout: UsageLayoutSummary[];
}

interface LayoutValues {
  layout: string;
  server: string | undefined;
  client: number[];
  overhead: number[];
}

function layoutSummary(v: LayoutValues): UsageLayoutSummary {
  const { layout } = v;
  const sorted = Float64Array.from(v.overhead).sort();
  const n = sorted.length;
  const range = { min_overhead_tokens: sorted[0] as number, max_overhead_tokens: sorted[n - 1] as number };
  const median_prompt_tokens = percentileSorted(Float64Array.from(v.client).sort(), 50);
  if (n < MIN_LAYOUT_REQUESTS) {
    return {
      layout,
      requests: n,
      median_prompt_tokens,
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
    median_prompt_tokens,
    overhead_tokens: learned,
    ...range,
    max_deviation_tokens: maxDeviation,
    discrepant,
  };
}

/**
 * Collects the successful requests' prompt counts by server and layout; {@link UsageCheck.result}
 * judges them, each server's layouts against that server's own learned overhead.
 */
export class UsageCheck {
  /** Keyed by server URL and layout (a NUL between them). */
  private readonly layouts = new Map<string, LayoutValues>();

  /** @param overheadOf what the endpoint's overhead is made of (see {@link UsageCheckSummary.overhead_of}). */
  constructor(private readonly overheadOf: OverheadOf = 'chat_template') {}

  /** Folds in one record (successful ones with both counts and a layout; others are skipped). */
  add(record: LineRecord): void {
    const { raw } = record;
    const server = raw.usage?.prompt_tokens;
    const client = raw.sentPromptTokens;
    if (!record.valid || server === undefined || client === undefined || raw.promptLayout === undefined)
      return;
    // A usage that contradicted its stream (stream integrity) teaches no template overhead.
    if (record.streamIntegrity?.usage_untrusted !== undefined) return;
    const key = `${raw.serverUrl ?? ''}\u0000${raw.promptLayout}`;
    let values = this.layouts.get(key);
    if (values === undefined) {
      values = { layout: raw.promptLayout, server: raw.serverUrl, client: [], overhead: [] };
      this.layouts.set(key, values);
    }
    values.client.push(client);
    values.overhead.push(server - client);
  }

  /** The check of the records added so far; null when no request could be compared. */
  result(): UsageCheckSummary | null {
    if (this.layouts.size === 0) return null;
    const servers = new Set([...this.layouts.values()].map((v) => v.server));
    const perLayout = [...this.layouts.values()].map((v) => {
      const l = layoutSummary(v);
      return servers.size > 1 && v.server !== undefined ? { ...l, server: v.server } : l;
    });
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
      overhead_of: this.overheadOf,
      per_layout: perLayout,
    };
  }
}

/** At most this many layouts are named on the console line. */
const LINE_LAYOUTS = 3;

/** Messages of a layout string (`user×2 assistant×1` → 3). */
function messagesOf(layout: string): number {
  let n = 0;
  for (const m of layout.matchAll(/×(\d+)/g)) n += Number(m[1]);
  return Math.max(n, 1);
}

/**
 * The largest overhead a template plausibly explains for `layout`: max({@link
 * TEMPLATE_MAX_TOKENS_PER_MESSAGE} × its messages, {@link TEMPLATE_MAX_PROMPT_PCT} % of its median
 * client prompt). Above it, the server most likely counts the prompt otherwise than `--tokenizer`.
 */
export function implausibleOverheadTokens(
  l: Pick<UsageLayoutSummary, 'layout' | 'median_prompt_tokens'>,
): number {
  return Math.max(
    TEMPLATE_MAX_TOKENS_PER_MESSAGE * messagesOf(l.layout),
    (TEMPLATE_MAX_PROMPT_PCT / 100) * l.median_prompt_tokens,
  );
}

/**
 * One warning per learned layout whose overhead is above {@link implausibleOverheadTokens}: a
 * template adds a few tokens per message, so such a figure is more likely a server that counts the
 * prompt with another tokenizer (or twice); empty when none.
 */
export function usageWarnings(u: UsageCheckSummary | null): string[] {
  if (u === null) return [];
  const name = OVERHEAD_NAME[u.overhead_of];
  return u.per_layout
    .filter((l) => l.overhead_tokens !== null && l.overhead_tokens > implausibleOverheadTokens(l))
    .map(
      (l) =>
        `the ${name} learned for ${l.layout}${at(l)} is ${l.overhead_tokens} tokens over a median client prompt of ` +
        `${l.median_prompt_tokens} tokens, more than max(${TEMPLATE_MAX_TOKENS_PER_MESSAGE} tokens per message, ` +
        `${TEMPLATE_MAX_PROMPT_PCT} % of the prompt) that a template adds: it may be a tokenizer mismatch ` +
        'rather than a template (the server counting the prompt with another tokenizer, or twice); check ' +
        'that --tokenizer matches the served model.',
    );
}

/** ` at SERVER` for a layout learned on one of several servers, else nothing. */
function at(l: UsageLayoutSummary): string {
  return l.server === undefined ? '' : ` at ${l.server}`;
}

/**
 * The console line of the check, e.g. `Usage check: chat template overhead learned from
 * usage.prompt_tokens: 8 tokens for user×1 (40 requests); 0 of 40 requests disagree with it beyond
 * max(10 %, 8 tokens)` (`prompt template/joiner overhead` on a plain-prompt endpoint). `untrusted`
 * is how many requests' usage contradicted their stream and was not used (the run's
 * `stream_integrity.usage_untrusted`): they are named at the end, or alone when nothing else was
 * compared, so the check never disappears because every usage was unusable. Null when nothing was
 * compared and no usage was set aside.
 */
export function usageCheckLine(u: UsageCheckSummary | null, untrusted = 0): string | null {
  const setAside =
    untrusted === 0
      ? ''
      : `${untrusted} ${untrusted === 1 ? "request's" : "requests'"} usage not used (it contradicted the stream)`;
  if (u === null)
    return untrusted === 0
      ? null
      : `Usage check: nothing compared; ${setAside}, see the stream-integrity warning`;
  const line = compareLine(u);
  return untrusted === 0 ? line : `${line}; ${setAside}`;
}

function compareLine(u: UsageCheckSummary): string {
  const name = OVERHEAD_NAME[u.overhead_of];
  const learned = u.per_layout.filter((l) => l.overhead_tokens !== null);
  if (learned.length === 0) {
    return `Usage check: no message layout had ${MIN_LAYOUT_REQUESTS} requests to learn a ${name} from (${u.requests_compared} requests unchecked)`;
  }
  const named = learned
    .slice(0, LINE_LAYOUTS)
    .map((l) => `${l.overhead_tokens} tokens for ${l.layout}${at(l)} (${l.requests} requests)`);
  if (learned.length > LINE_LAYOUTS) named.push(`${learned.length - LINE_LAYOUTS} more layouts`);
  const unchecked = u.requests_unchecked > 0 ? `; ${u.requests_unchecked} in rarer layouts unchecked` : '';
  return (
    `Usage check: ${name} learned from usage.prompt_tokens: ${named.join(', ')}; ` +
    `${u.discrepant} of ${u.requests_compared - u.requests_unchecked} requests disagree with ` +
    `${learned.some((l) => l.server !== undefined) ? "their server's" : 'it'} beyond ` +
    `max(${USAGE_DISCREPANCY_PCT} %, ${USAGE_DISCREPANCY_MIN_TOKENS} tokens)${unchecked}`
  );
}
