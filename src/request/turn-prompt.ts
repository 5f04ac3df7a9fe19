/**
 * Resolves a turn's {@link PromptSpec} into the messages it contributes and its exact prompt token
 * count, lazily at send time (prompts can be 100k+ tokens; they are never all built up front).
 */
import { type ChatMessage, contentText, type Turn } from '../dataset/types.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import type { Steps } from '../util/steps.js';
import { PROMPT_PLACEHOLDER } from './body-bytes.js';
import { payloadInput, payloadTokens } from './payload-input.js';

/**
 * A turn's own messages and their token counts (null when not computable, e.g. a body without text).
 * Without a chat template, `inputTokens` = `textTokens`.
 */
export interface TurnPrompt {
  /**
   * The turn's own messages. For a synthesized prompt, one user message whose content is
   * {@link PROMPT_PLACEHOLDER}, standing for `pieces` ({@link ownMessages} gives it with the text).
   */
  messages: ChatMessage[];
  /** A synthesized prompt's text, unjoined (prompt/synthesizer.ts `PromptPieces`). */
  pieces?: readonly string[];
  /**
   * The ISL: tokens of the own messages as the server counts them alone, i.e. rendered through the
   * chat template with `--apply-chat-template` (prompt/template-count.ts), else their texts' tokens.
   */
  inputTokens: number | null;
  /** Tokens of the own messages' texts, no template (the sum of `messageTokens`). */
  textTokens: number | null;
  /** Tokens of each own message's text, in `messages` order (null: not a string). */
  messageTokens: (number | null)[];
  /** A verbatim request body (`inputs_json`, `raw_payload`, Mooncake `payload`), sent instead of a built one. */
  payload?: Record<string, unknown>;
  /** The verbatim body's message array as role and text (payload-input.ts); null when it has none. */
  payloadMessages?: ChatMessage[] | null;
  /** True when `messages` carry the run's `--system-prompt` (request/system-prompt.ts). */
  systemPrompt?: true;
}

/**
 * Builds the prompt of `turn`, in steps (a synthesized prompt's new text a few thousand tokens per
 * step, prompt/synthesizer.ts); `uniqueKey` makes uncached prompt tails differ per request. With a
 * chat template (`counter`), a synthesized prompt's text is shortened from its end so that the
 * templated prompt has the turn's input length (`TemplateCounter.fitUserText`).
 * @throws {PromptSynthesisError} for impossible hash_id layouts; what a chat template raised.
 */
export function* resolveTurnPrompt(
  turn: Turn,
  uniqueKey: string,
  synthesizer: PromptSynthesizer,
  tokenizer: TextTokenizer,
  counter: TemplateCounter | null = null,
): Steps<TurnPrompt> {
  const p = turn.prompt;
  switch (p.kind) {
    case 'synthetic': {
      const s = yield* synthesizer.piecesInSteps(p.inputLength, p.hashIds, p.blockSize, uniqueKey);
      const messages: ChatMessage[] = [{ role: 'user', content: PROMPT_PLACEHOLDER }];
      if (counter === null)
        return {
          messages,
          inputTokens: s.tokens,
          textTokens: s.tokens,
          messageTokens: [s.tokens],
          pieces: s.pieces,
        };
      // Rendering and counting a long prompt is a step of its own (about 5 ms at 100k tokens).
      yield;
      const fit = counter.fitUserText(s.pieces, s.tokens, p.inputLength, synthesizer.additive);
      const text = fit.textTokens;
      return {
        messages,
        inputTokens: fit.templatedTokens,
        textTokens: text,
        messageTokens: [text],
        pieces: fit.pieces,
      };
    }
    case 'text':
      return counted([{ role: 'user', content: p.text }], tokenizer, counter);
    case 'messages':
      return counted(p.messages, tokenizer, counter);
    case 'payload':
      return payloadPrompt(p.payload, tokenizer, counter);
  }
}

/**
 * The prompt of a verbatim body: no own messages (nothing joins a history), its whole text counted
 * as AIPerf counts it (payload-input.ts), since the body is the whole request.
 */
function payloadPrompt(
  payload: Record<string, unknown>,
  tokenizer: TextTokenizer,
  counter: TemplateCounter | null,
): TurnPrompt {
  const input = payloadInput(payload);
  const inputTokens = payloadTokens(input, tokenizer, counter);
  const textTokens = input.texts.length === 0 ? null : tokenizer.count(input.texts.join(' '));
  return {
    messages: [],
    inputTokens,
    textTokens,
    messageTokens: [],
    payload,
    payloadMessages: input.messages,
  };
}

/** The prompt of literal `messages`: each text counted, and the whole through the template when there is one. */
function counted(
  messages: ChatMessage[],
  tokenizer: TextTokenizer,
  counter: TemplateCounter | null,
): TurnPrompt {
  const messageTokens = messages.map((m) => {
    const text = contentText(m.content);
    return text === null ? null : tokenizer.count(text);
  });
  const textTokens = messageTokens.reduce<number>((sum, t) => sum + (t ?? 0), 0);
  const inputTokens = counter === null ? textTokens : counter.count(messages, messageTokens);
  return { messages, inputTokens, textTokens, messageTokens };
}

/** The turn's own messages with their text (a synthesized prompt's pieces joined). */
export function ownMessages(prompt: TurnPrompt): ChatMessage[] {
  return prompt.pieces === undefined
    ? prompt.messages
    : withPromptText(prompt.messages, prompt.pieces.join(''));
}

/** `messages` with the synthesized prompt's text in place of {@link PROMPT_PLACEHOLDER}. */
export function withPromptText(messages: readonly ChatMessage[], text: string): ChatMessage[] {
  return messages.map((m) => (m.content === PROMPT_PLACEHOLDER ? { ...m, content: text } : m));
}
