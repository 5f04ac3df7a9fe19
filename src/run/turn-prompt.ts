/**
 * Resolves a turn's {@link PromptSpec} into the messages it contributes and its exact prompt token
 * count, lazily at send time (prompts can be 100k+ tokens; they are never all built up front).
 */
import type { ChatMessage, Turn } from '../dataset/types.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import type { Steps } from '../util/steps.js';
import { PROMPT_PLACEHOLDER } from './body-bytes.js';

/** A turn's own messages and its prompt length in tokens (null when not computable, e.g. raw payloads). */
export interface TurnPrompt {
  /**
   * The turn's own messages. For a synthesized prompt, one user message whose content is
   * {@link PROMPT_PLACEHOLDER}, standing for `pieces` ({@link ownMessages} gives it with the text).
   */
  messages: ChatMessage[];
  /** A synthesized prompt's text, unjoined (prompt/synthesizer.ts `PromptPieces`). */
  pieces?: readonly string[];
  inputTokens: number | null;
  /** A verbatim request body (Mooncake `payload`), sent instead of a built one. */
  payload?: Record<string, unknown>;
}

/**
 * Builds the prompt of `turn`, in steps (a synthesized prompt's new text a few thousand tokens per
 * step, prompt/synthesizer.ts); `uniqueKey` makes uncached prompt tails differ per request.
 * @throws {PromptSynthesisError} for impossible hash_id layouts.
 */
export function* resolveTurnPrompt(
  turn: Turn,
  uniqueKey: string,
  synthesizer: PromptSynthesizer,
  tokenizer: TextTokenizer,
): Steps<TurnPrompt> {
  const p = turn.prompt;
  switch (p.kind) {
    case 'synthetic': {
      const s = yield* synthesizer.piecesInSteps(p.inputLength, p.hashIds, p.blockSize, uniqueKey);
      const messages: ChatMessage[] = [{ role: 'user', content: PROMPT_PLACEHOLDER }];
      return { messages, inputTokens: s.tokens, pieces: s.pieces };
    }
    case 'text':
      return { messages: [{ role: 'user', content: p.text }], inputTokens: tokenizer.count(p.text) };
    case 'messages': {
      let tokens = 0;
      for (const m of p.messages) if (typeof m.content === 'string') tokens += tokenizer.count(m.content);
      return { messages: p.messages, inputTokens: tokens };
    }
    case 'payload':
      return { messages: [], inputTokens: null, payload: p.payload };
  }
}

/** The turn's own messages with their text (a synthesized prompt's pieces joined). */
export function ownMessages(prompt: TurnPrompt): ChatMessage[] {
  return prompt.pieces === undefined ? prompt.messages : [{ role: 'user', content: prompt.pieces.join('') }];
}

/** `messages` with the synthesized prompt's text in place of {@link PROMPT_PLACEHOLDER}. */
export function withPromptText(messages: readonly ChatMessage[], text: string): ChatMessage[] {
  return messages.map((m) => (m.content === PROMPT_PLACEHOLDER ? { ...m, content: text } : m));
}
