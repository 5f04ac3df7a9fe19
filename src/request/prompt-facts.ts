/**
 * What the run's checks need to know about a request's prompt, decided when the request is built:
 * its message layout and client token count (the usage check compares them with the server's
 * `usage.prompt_tokens`), and the blocks it is made of (the ideal prefix cache, `ideal_cached_tokens`).
 *
 * With a client-side chat template (`--apply-chat-template`), the client count is the templated
 * prompt's (history included), so the overhead the usage check learns is about 0 for every layout.
 */
import { type CacheBlock, promptBlocks } from '../dataset/prefix-chain.js';
import type { ChatMessage, Turn } from '../dataset/types.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { CountedMessages } from './conversation-context.js';
import { type TurnPrompt, withPromptText } from './turn-prompt.js';

/** The prompt facts of one request (record fields `promptLayout`, `sentPromptTokens`). */
export interface PromptFacts {
  /** {@link layoutOf} the messages sent (a verbatim body's own message array); absent when there are none. */
  layout?: string;
  /** Client tokens of every message sent, history included; absent when unknown. */
  sentTokens?: number;
  /** The synthesized prompt's blocks, when it is the whole prompt sent; null otherwise. */
  cacheBlocks: CacheBlock[] | null;
}

/**
 * The layout of `messages`: each role with its count, in order of first appearance, e.g. `user×1`,
 * `system×1 user×1`, `user×3 assistant×2`.
 */
export function layoutOf(messages: readonly ChatMessage[]): string {
  const counts = new Map<string, number>();
  for (const m of messages) counts.set(m.role, (counts.get(m.role) ?? 0) + 1);
  return [...counts].map(([role, n]) => `${role}×${n}`).join(' ');
}

/**
 * Facts of a request whose own prompt is `prompt`, sent as `messages` (null for a verbatim payload)
 * after `history` (the earlier messages in `messages`, with their client tokens).
 * @param tailKey the key that seeded the prompt's fresh tail (resolveTurnPrompt's `uniqueKey`).
 * @param counter the run's chat template counter (`--apply-chat-template`), or null.
 * @throws {Error} what the chat template raised.
 */
export function promptFacts(
  turn: Turn,
  prompt: TurnPrompt,
  messages: readonly ChatMessage[] | null,
  history: CountedMessages,
  tailKey: string,
  counter: TemplateCounter | null = null,
): PromptFacts {
  if (messages === null) return payloadFacts(prompt);
  const facts: PromptFacts = { layout: layoutOf(messages), cacheBlocks: null };
  const sent = sentTokens(prompt, messages, history, counter);
  if (sent !== null) facts.sentTokens = sent;
  const spec = turn.prompt;
  // Only a prompt that is the whole request: with history (or a system prompt) in front, the server's
  // cache also holds the earlier turns and replies, which no trace block names.
  if (
    spec.kind === 'synthetic' &&
    messages.length === prompt.messages.length &&
    prompt.systemPrompt !== true
  ) {
    facts.cacheBlocks = promptBlocks(spec.hashIds, spec.inputLength, spec.blockSize, tailKey);
  }
  return facts;
}

/** A verbatim body's facts: its own message layout, and its client count (the whole body is sent). */
function payloadFacts(prompt: TurnPrompt): PromptFacts {
  const facts: PromptFacts = { cacheBlocks: null };
  const sent = prompt.payloadMessages;
  if (sent === undefined || sent === null || sent.length === 0) return facts;
  facts.layout = layoutOf(sent);
  if (prompt.inputTokens !== null) facts.sentTokens = prompt.inputTokens;
  return facts;
}

/** Client tokens of every message sent: history + own texts, or the whole rendered through the template. */
function sentTokens(
  prompt: TurnPrompt,
  messages: readonly ChatMessage[],
  history: CountedMessages,
  counter: TemplateCounter | null,
): number | null {
  if (counter === null) {
    if (prompt.textTokens === null || history.tokens === null) return null;
    return history.tokens + prompt.textTokens;
  }
  // Alone, the request's prompt is the turn's own messages, already counted through the template.
  if (messages.length === prompt.messages.length) return prompt.inputTokens;
  const text = prompt.pieces === undefined ? null : prompt.pieces.join('');
  const withText = text === null ? messages : withPromptText(messages, text);
  return counter.count(withText, [...history.messageTokens, ...prompt.messageTokens]);
}
