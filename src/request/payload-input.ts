/**
 * The prompt of a verbatim request body (`inputs_json`, `raw_payload`, Mooncake `payload`), as AIPerf
 * counts it: the ISL is the client tokenizer's count of the body's text, whatever part of it a past
 * turn or the history contributed, since the whole body is what the server reads. The text is,
 * in this order: every chat `messages` (or Responses `input`) item's string content or text parts,
 * the name and arguments of its tool calls, the top-level `tools` schemas (name, description,
 * parameters as JSON); or, for a body without a message array, its `prompt`, `input` (string or
 * strings) or `inputs`. The pieces are joined with one space and counted once (AIPerf source:
 * records/inference_result_parser.py `compute_input_token_count`, endpoints/payload_extraction.py).
 * With a chat template (`--apply-chat-template`), a body with a message array is counted as those
 * messages rendered through the template, plus its tool texts counted bare.
 */
import { type ChatMessage, contentText } from '../dataset/types.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';

/** What a body holds that the server reads as prompt. */
export interface PayloadInput {
  /** Every text piece in body order (tool texts included). */
  texts: string[];
  /** The tool texts alone (tool calls, `tools` schemas). */
  toolTexts: string[];
  /** The message array as role and joined text (null: the body has none). */
  messages: ChatMessage[] | null;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyStrings = (o: Json, keys: readonly string[]): string[] =>
  keys.map((k) => o[k]).filter((v): v is string => typeof v === 'string' && v.length > 0);

function contentTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const part of content) {
    const text = isObject(part) ? part.text : undefined;
    const type = isObject(part) ? part.type : undefined;
    if (typeof text === 'string' && (type === 'text' || type === 'input_text' || type === 'output_text'))
      out.push(text);
  }
  return out;
}

function itemTexts(item: Json, input: PayloadInput): void {
  const own = contentTexts(item.content);
  input.texts.push(...own);
  const calls = Array.isArray(item.tool_calls) ? item.tool_calls : [];
  for (const call of calls) {
    const fn = isObject(call) && isObject(call.function) ? call.function : null;
    if (fn !== null) input.texts.push(...nonEmptyStrings(fn, ['name', 'arguments']));
  }
  const tool =
    item.type === 'function_call'
      ? nonEmptyStrings(item, ['name', 'arguments'])
      : item.type === 'function_call_output'
        ? nonEmptyStrings(item, ['output'])
        : [];
  input.texts.push(...tool);
  input.toolTexts.push(...tool);
  if (typeof item.role === 'string') input.messages?.push({ role: item.role, content: own.join('') });
}

function toolSchemaTexts(body: Json, input: PayloadInput): void {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  for (const tool of tools) {
    if (!isObject(tool)) continue;
    for (const source of [tool.function, tool]) {
      if (!isObject(source)) continue;
      const texts = nonEmptyStrings(source, ['name', 'description']);
      if (isObject(source.parameters)) texts.push(JSON.stringify(source.parameters));
      input.texts.push(...texts);
      input.toolTexts.push(...texts);
    }
  }
}

function flatTexts(body: Json): string[] {
  for (const key of ['prompt', 'input']) {
    const v = body[key];
    if (typeof v === 'string') return [v];
    if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v as string[];
  }
  return typeof body.inputs === 'string' ? [body.inputs] : [];
}

const isItem = (i: unknown): boolean => isObject(i) && ('role' in i || 'type' in i);

/** The prompt text of `body` (see the module comment). */
export function payloadInput(body: Json): PayloadInput {
  const input: PayloadInput = { texts: [], toolTexts: [], messages: null };
  for (const key of ['messages', 'input']) {
    const items = body[key];
    if (!Array.isArray(items) || !items.some(isItem)) continue;
    input.messages ??= [];
    for (const item of items) if (isObject(item)) itemTexts(item, input);
  }
  toolSchemaTexts(body, input);
  if (input.messages === null) input.texts.push(...flatTexts(body));
  return input;
}

/**
 * The client token count of a verbatim body's prompt; null when it holds no text (nothing to count).
 * @throws {Error} what the chat template raised.
 */
export function payloadTokens(
  input: PayloadInput,
  tokenizer: TextTokenizer,
  counter: TemplateCounter | null,
): number | null {
  if (counter !== null && input.messages !== null && input.messages.length > 0) {
    const tokens = input.messages.map((m) => tokenizer.count(contentText(m.content) ?? ''));
    const tools = input.toolTexts.length === 0 ? 0 : tokenizer.count(input.toolTexts.join(' '));
    return counter.count(input.messages, tokens) + tools;
  }
  return input.texts.length === 0 ? null : tokenizer.count(input.texts.join(' '));
}

/** The output length a body asks for: `max_completion_tokens`, `max_tokens` or `max_output_tokens`; else null. */
export function payloadMaxTokens(body: Json): number | null {
  for (const key of ['max_completion_tokens', 'max_tokens', 'max_output_tokens', 'max_new_tokens']) {
    const v = body[key];
    if (Number.isSafeInteger(v)) return v as number;
  }
  const params = body.parameters;
  return isObject(params) && Number.isSafeInteger(params.max_new_tokens)
    ? (params.max_new_tokens as number)
    : null;
}
