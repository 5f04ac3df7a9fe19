/**
 * The tokenizer's chat template, rendered on the client (`--apply-chat-template`) as a chat server
 * renders it before counting `usage.prompt_tokens`: the Jinja template of `chat_template.jinja` in
 * the tokenizer's folder, else `chat_template` of `tokenizer_config.json` (a string, or the entry
 * named `default` of a list), rendered by `@huggingface/jinja` with the messages, the generation
 * prompt (`add_generation_prompt`), the special tokens of tokenizer_config.json, the request's
 * `chat_template_kwargs` (vLLM and SGLang pass them to the template) and no tools.
 */
import { readFileSync } from 'node:fs';
import { Template } from '@huggingface/jinja';
import type { ChatMessage } from '../dataset/types.js';
import { readTokenizerJson, resolveFiles, TokenizerLoadError } from './tokenizer.js';

/** A loaded chat template. */
export interface ChatTemplate {
  /** The file it came from (`…/chat_template.jinja` or `…/tokenizer_config.json`). */
  readonly source: string;
  /**
   * The prompt text of `messages` with the generation prompt, as the server renders it.
   * @throws {ChatTemplateError} what the template raised (`raise_exception`) or a Jinja error.
   */
  render(messages: readonly ChatMessage[]): string;
}

/**
 * A chat template that failed to render one request's messages (its own `raise_exception`, e.g.
 * roles that do not alternate, or a Jinja error): that request fails on the client, recorded with
 * this `type` (record/failure.ts `client_error`); the message names the template file.
 */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
  constructor(
    readonly source: string,
    cause: unknown,
  ) {
    super(
      `the chat template of ${source} raised: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
  }
}

/** Special-token names transformers passes to the template. */
const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token'];

/** A special token's string: a plain string or an added-token object's `content`. */
function tokenString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  const content = (value as { content?: unknown } | null | undefined)?.content;
  return typeof content === 'string' ? content : undefined;
}

/** The template text of tokenizer_config.json's `chat_template`, if it has one. */
function configTemplate(config: Record<string, unknown>): string | undefined {
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  if (!Array.isArray(t)) return undefined;
  const named = t as Array<{ name?: unknown; template?: unknown }>;
  const entry = named.find((e) => e.name === 'default');
  return typeof entry?.template === 'string' ? entry.template : undefined;
}

/**
 * Loads the chat template of the tokenizer at `path` (`builtin:qwen3`, a folder or a tokenizer.json).
 * @param kwargs extra template variables, as a server takes them from the body's
 *   `chat_template_kwargs` (e.g. `{enable_thinking: false}`).
 * @throws {TokenizerLoadError} when the tokenizer has no template, or it does not parse.
 */
export function loadChatTemplate(path: string, kwargs: Record<string, unknown> = {}): ChatTemplate {
  const files = resolveFiles(path);
  const config =
    files.configJson === null ? {} : readTokenizerJson(files.configJson, 'config', '--apply-chat-template');
  let source = files.chatTemplateFile;
  let text = source === null ? undefined : readFileSync(source, 'utf8');
  if (text === undefined) {
    text = configTemplate(config);
    source = text === undefined ? null : files.configJson;
  }
  if (text === undefined || source === null) {
    throw new TokenizerLoadError(
      `--apply-chat-template: tokenizer ${files.name} has no chat template (no chat_template.jinja, no chat_template in ${files.configJson ?? 'tokenizer_config.json (absent)'})`,
    );
  }
  let template: Template;
  try {
    template = new Template(text);
  } catch (err) {
    throw new TokenizerLoadError(
      `--apply-chat-template: the chat template of ${source} does not parse (${(err as Error).message})`,
    );
  }
  const context: Record<string, unknown> = { ...kwargs, add_generation_prompt: true };
  for (const key of SPECIAL_TOKEN_KEYS) {
    const value = tokenString(config[key]);
    if (value !== undefined) context[key] = value;
  }
  const render = (messages: readonly ChatMessage[]): string => {
    try {
      return template.render({ ...context, messages: withTextContent(messages) });
    } catch (err) {
      throw new ChatTemplateError(source, err);
    }
  };
  return { source, render };
}

/**
 * `messages` with a null `content` (an assistant message that only calls tools) rendered as '', as
 * chat servers (vLLM) read it before their template runs: templates test `'</think>' in
 * message.content`, which fails on null. The same array when no content is null.
 */
function withTextContent(messages: readonly ChatMessage[]): readonly ChatMessage[] {
  if (!messages.some((m) => m.content === null)) return messages;
  return messages.map((m) => (m.content === null ? { ...m, content: '' } : m));
}
