/**
 * Builds the message array of a turn according to its conversation's context mode
 * (AIPerf reference "conversation-context-mode"):
 * - `message_array_with_responses`: the turn alone, self-contained (Bailian: one user message);
 * - `deltas_without_responses`: every earlier turn's own messages of the session with the LIVE
 *   assistant reply it got (its text; with its tool calls, the assistant message's `tool_calls`, its
 *   `content` null when the reply had no text), then the new turn;
 * - `deltas_with_responses`: every earlier turn's own stored messages (including any recorded
 *   assistant messages), the live replies discarded.
 *
 * It also keeps the client token count of that history, so a request's whole prompt can be compared
 * with the server's `usage.prompt_tokens` (the usage check).
 */
import type { ChatMessage, ContextMode } from '../dataset/types.js';
import type { ToolCall } from '../record/types.js';

/**
 * A live reply as it joins the history: its content text with its client token count, and its tool
 * calls when it had any (reassembled, record/tool-calls.ts).
 */
export interface LiveReply {
  text: string;
  tokens: number;
  toolCalls?: ToolCall[];
}

/**
 * The assistant message of a live reply: `{role, content}`, or with tool calls
 * `{role, content, tool_calls}` whose `content` is null when the reply had no text (as OpenAI sends it).
 */
function replyMessage(reply: LiveReply): ChatMessage {
  if (reply.toolCalls === undefined) return { role: 'assistant', content: reply.text };
  return { role: 'assistant', content: reply.text === '' ? null : reply.text, tool_calls: reply.toolCalls };
}

/** Messages with their client token count (null when some text could not be counted). */
export interface CountedMessages {
  messages: ChatMessage[];
  tokens: number | null;
  /** Tokens of each message's text, in `messages` order (null: unknown); used by a chat template count. */
  messageTokens: (number | null)[];
}

/** Per-conversation history, dropped when the conversation ends. */
export class ConversationContext {
  private readonly history = new Map<string, CountedMessages>();

  /**
   * Messages to send for a turn whose own messages are `turnMessages`.
   * @param conversationId session id
   * @param mode the conversation's context mode
   */
  messagesFor(conversationId: string, mode: ContextMode, turnMessages: ChatMessage[]): ChatMessage[] {
    if (mode === 'message_array_with_responses') return turnMessages;
    const earlier = this.history.get(conversationId)?.messages ?? [];
    return [...earlier, ...turnMessages];
  }

  /**
   * The history {@link messagesFor} prepends, with its client tokens (`tokens` 0 without history,
   * null when unknown) and each message's.
   */
  historyOf(conversationId: string, mode: ContextMode): CountedMessages {
    const none = { messages: [], tokens: 0, messageTokens: [] };
    if (mode === 'message_array_with_responses') return none;
    return this.history.get(conversationId) ?? none;
  }

  /**
   * Records what a turn contributes to later turns: its own messages, plus the live reply in
   * `deltas_without_responses` mode (only when the request succeeded: a failed or cancelled turn
   * adds no assistant message, so the next turn carries its own messages right after this one's).
   */
  remember(
    conversationId: string,
    mode: ContextMode,
    turn: CountedMessages,
    liveReply: LiveReply | null,
    isLastTurn: boolean,
  ): void {
    if (mode === 'message_array_with_responses' || isLastTurn) {
      this.history.delete(conversationId);
      return;
    }
    const entry = this.history.get(conversationId) ?? { messages: [], tokens: 0, messageTokens: [] };
    entry.messages.push(...turn.messages);
    entry.messageTokens.push(...turn.messages.map((_, i) => turn.messageTokens[i] ?? null));
    entry.tokens = entry.tokens === null || turn.tokens === null ? null : entry.tokens + turn.tokens;
    if (mode === 'deltas_without_responses' && liveReply !== null) {
      entry.messages.push(replyMessage(liveReply));
      entry.messageTokens.push(liveReply.tokens);
      if (entry.tokens !== null) entry.tokens += liveReply.tokens;
    }
    this.history.set(conversationId, entry);
  }
}
