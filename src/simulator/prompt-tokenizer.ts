/**
 * The simulator's prompt tokenizer: the same exact encoder the client uses (`loadTokenizer`, which
 * takes the fast cached path of `prompt/fast-encoder.ts` for Qwen2/Qwen3/Llama 3-shaped tokenizers
 * and the library's full encode otherwise).
 */
import {
  buildFastEncoder,
  isFastPathEligible,
  type PromptTokenizer,
  type TokenizerJson,
} from '../prompt/fast-encoder.js';
import { loadTokenizer, readJson, resolveFiles } from '../prompt/tokenizer.js';

export { isFastPathEligible, type PromptTokenizer, splitAddedTokens } from '../prompt/fast-encoder.js';

/**
 * Builds the prompt tokenizer for a tokenizer spec (same spec syntax as `--tokenizer`).
 * @param spec `builtin:qwen3`, a model folder or a tokenizer.json(.gz) path.
 * @param forceLibrary always use the library's full encode (for comparisons and benchmarks).
 * @throws {TokenizerLoadError} when the files are missing or unreadable.
 */
export function createPromptTokenizer(spec: string, forceLibrary = false): PromptTokenizer {
  if (!forceLibrary) {
    const files = resolveFiles(spec);
    const json = readJson(files.tokenizerJson) as TokenizerJson;
    const config = (files.configJson === null ? {} : readJson(files.configJson)) as Record<string, unknown>;
    const fast = isFastPathEligible(json, config) ? buildFastEncoder(json) : null;
    if (fast !== null) return fast;
  }
  const lib = loadTokenizer(spec, { engine: 'library' });
  return { engine: 'library', encode: (text) => lib.encode(text) };
}
