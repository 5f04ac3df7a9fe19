/**
 * `--system-prompt` / `--system-prompt-file` on the wire (AIPerf's custom-dataset tutorial, "Adding a
 * System Prompt"): the exact text as one system message at the start of every request of every
 * conversation. A dataset's own leading system message is kept: the text is put in front of it,
 * separated by a blank line, so the request still has one system message. Its tokens add to the
 * prompt's (the synthetic prompt keeps its `--isl`).
 *
 * The message joins a turn's own messages where nothing in front of them carries it already: on the
 * first turn of a conversation that re-sends its history (later turns get it back with the history),
 * and on every turn of a conversation whose turns are self-contained
 * (`message_array_with_responses`). Each endpoint puts the system message where its API wants it
 * (chat: a `system` message; Messages: the top-level `system`; Responses: `instructions`).
 */
import type { ChatMessage, ContextMode } from '../dataset/types.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import { type TurnPrompt, withPromptText } from './turn-prompt.js';

/** What separates the system prompt from a dataset's own system message it is prepended to. */
export const SYSTEM_PROMPT_SEPARATOR = '\n\n';

/**
 * `messages` with `text` as their system message: prepended to a leading system message with a
 * string content (a blank line between), else a new system message in front.
 */
export function withSystemPrompt(messages: readonly ChatMessage[], text: string): ChatMessage[] {
  const first = messages[0];
  if (first?.role === 'system' && typeof first.content === 'string')
    return [{ ...first, content: `${text}${SYSTEM_PROMPT_SEPARATOR}${first.content}` }, ...messages.slice(1)];
  return [{ role: 'system', content: text }, ...messages];
}

/** True when the turn's own messages must carry the system prompt (see the module comment). */
export function carriesSystemPrompt(mode: ContextMode, turnIndex: number): boolean {
  return turnIndex === 0 || mode === 'message_array_with_responses';
}

/**
 * `prompt` with the system prompt `text` among its own messages, its counts updated: the system
 * message's tokens added to the text tokens, and the templated count (with `counter`) taken over
 * every message. A verbatim body's prompt is returned as it is (the configuration refuses those).
 * @throws {Error} what the chat template raised.
 */
export function promptWithSystem(
  prompt: TurnPrompt,
  text: string,
  tokenizer: TextTokenizer,
  counter: TemplateCounter | null,
): TurnPrompt {
  if (prompt.payload !== undefined) return prompt;
  const messages = withSystemPrompt(prompt.messages, text);
  const merged = messages.length === prompt.messages.length;
  const head = messages[0] as ChatMessage;
  const headTokens = tokenizer.count(head.content as string);
  const messageTokens = merged
    ? [headTokens, ...prompt.messageTokens.slice(1)]
    : [headTokens, ...prompt.messageTokens];
  const replaced = merged ? prompt.messageTokens[0] : 0;
  const textTokens =
    prompt.textTokens === null || replaced === null || replaced === undefined
      ? null
      : prompt.textTokens + headTokens - replaced;
  const withText = prompt.pieces === undefined ? messages : withPromptText(messages, prompt.pieces.join(''));
  const inputTokens = counter === null ? textTokens : counter.count(withText, messageTokens);
  return { ...prompt, messages, messageTokens, textTokens, inputTokens, systemPrompt: true };
}
