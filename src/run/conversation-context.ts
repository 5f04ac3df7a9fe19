/**
 * Builds the message array of a turn according to its conversation's context mode
 * (AIPerf reference "conversation-context-mode"):
 * - `message_array_with_responses`: the turn alone, self-contained (Bailian: one user message);
 * - `deltas_without_responses`: every earlier user turn of the session with the LIVE assistant reply
 *   it got, then the new turn;
 * - `deltas_with_responses`: every earlier turn's own stored messages (including any recorded
 *   assistant messages), the live replies discarded.
 */
import type { ChatMessage, ContextMode } from '../dataset/types.js';

/** Per-conversation history, dropped when the conversation ends. */
export class ConversationContext {
  private readonly history = new Map<string, ChatMessage[]>();

  /**
   * Messages to send for a turn whose own messages are `turnMessages`.
   * @param conversationId session id
   * @param mode the conversation's context mode
   */
  messagesFor(conversationId: string, mode: ContextMode, turnMessages: ChatMessage[]): ChatMessage[] {
    if (mode === 'message_array_with_responses') return turnMessages;
    const earlier = this.history.get(conversationId) ?? [];
    return [...earlier, ...turnMessages];
  }

  /**
   * Records what a turn contributes to later turns: its own messages, plus the live reply in
   * `deltas_without_responses` mode (only when the request succeeded with some output).
   */
  remember(
    conversationId: string,
    mode: ContextMode,
    turnMessages: ChatMessage[],
    liveReply: string | null,
    isLastTurn: boolean,
  ): void {
    if (mode === 'message_array_with_responses' || isLastTurn) {
      this.history.delete(conversationId);
      return;
    }
    const list = this.history.get(conversationId) ?? [];
    list.push(...turnMessages);
    if (mode === 'deltas_without_responses' && liveReply !== null) {
      list.push({ role: 'assistant', content: liveReply });
    }
    this.history.set(conversationId, list);
  }
}
