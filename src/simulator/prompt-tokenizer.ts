/**
 * The simulator's prompt tokenizer: the same exact encoder the client uses (`loadTokenizer`, which
 * takes the fast cached path of `prompt/fast-encoder.ts` for Qwen2/Qwen3/Llama 3-shaped tokenizers
 * and the library's full encode otherwise).
 */
import type { PromptTokenizer } from '../prompt/fast-encoder.js';
import { loadTokenizer } from '../prompt/tokenizer.js';

export { isFastPathEligible, type PromptTokenizer, splitAddedTokens } from '../prompt/fast-encoder.js';

/**
 * Builds the prompt tokenizer for a tokenizer spec (same spec syntax as `--tokenizer`): the client's
 * {@link loadTokenizer}, whose result the simulator uses directly.
 * @param spec `builtin:qwen3`, a model folder or a tokenizer.json(.gz) path.
 * @param forceLibrary always use the library's full encode (for comparisons and benchmarks).
 * @throws {TokenizerLoadError} when the files are missing or unreadable.
 */
export function createPromptTokenizer(spec: string, forceLibrary = false): PromptTokenizer {
  return loadTokenizer(spec, forceLibrary ? { engine: 'library' } : {});
}
