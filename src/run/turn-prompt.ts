/**
 * Resolves a turn's {@link PromptSpec} into the messages it contributes and its exact prompt token
 * count, lazily at send time (prompts can be 100k+ tokens; they are never all built up front).
 */
import type { ChatMessage, Turn } from '../dataset/types.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';

/** A turn's own messages and its prompt length in tokens (null when not computable, e.g. raw payloads). */
export interface TurnPrompt {
  messages: ChatMessage[];
  inputTokens: number | null;
  /** A verbatim request body (Mooncake `payload`), sent instead of a built one. */
  payload?: Record<string, unknown>;
}

/**
 * Builds the prompt of `turn`; `uniqueKey` makes uncached prompt tails differ per request.
 * @throws {PromptSynthesisError} for impossible hash_id layouts.
 */
export function resolveTurnPrompt(
  turn: Turn,
  uniqueKey: string,
  synthesizer: PromptSynthesizer,
  tokenizer: TextTokenizer,
): TurnPrompt {
  const p = turn.prompt;
  switch (p.kind) {
    case 'synthetic': {
      const s = synthesizer.synthesize(p.inputLength, p.hashIds, p.blockSize, uniqueKey);
      return { messages: [{ role: 'user', content: s.text }], inputTokens: s.tokens };
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
