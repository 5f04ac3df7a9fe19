/**
 * The simulator's chat template (`chatTemplate` option): what a chat server puts around the messages
 * before it tokenizes them, so that `usage.prompt_tokens` counts the template's tokens as a real
 * server's does. `none` (default) joins the messages' texts with one space; `chatml` is Qwen's ChatML
 * without a system default or tools: `<|im_start|>{role}\n{text}<|im_end|>\n` per message, then
 * `<|im_start|>assistant\n` (with the bundled Qwen3 tokenizer: 5 tokens per message plus 3).
 */

/** The `chatTemplate` choices. */
export const CHAT_TEMPLATES = ['none', 'chatml'] as const;

/** A chat template name. */
export type ChatTemplate = (typeof CHAT_TEMPLATES)[number];

/** One chat message as the template sees it. */
export interface TemplateMessage {
  role: string;
  text: string;
}

/** The prompt text of `messages` under `template`. */
export function applyChatTemplate(template: ChatTemplate, messages: readonly TemplateMessage[]): string {
  if (template === 'none') return messages.map((m) => m.text).join(' ');
  let text = '';
  for (const m of messages) text += `<|im_start|>${m.role}\n${m.text}<|im_end|>\n`;
  return `${text}<|im_start|>assistant\n`;
}
