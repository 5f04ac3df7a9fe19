/**
 * Prompt synthesis from KV-cache block ids (`hash_ids`). Layouts, for input length L, n ids and
 * block size B (AIPerf's rules: `aiperf/dataset/generator/prompt.py` in github.com/ai-dynamo/aiperf):
 * - exact tile `L = n·B`: n full blocks;
 * - partial last block `(n−1)·B < L < n·B`: the last block has `L − (n−1)·B` tokens;
 * - prefix plus tail `L > n·B`: n full blocks and `L − n·B` fresh, uncached tokens;
 * - too many ids `L ≤ (n−1)·B`: an error.
 * The prompt tokenizes to exactly L tokens under the run's tokenizer: by construction when the word
 * list is additive, otherwise by a bounded repair loop at the tail.
 */

import { TokenloadError } from '../errors.js';
import { BlockStore } from './block-store.js';
import type { TextTokenizer } from './tokenizer.js';
import { buildWordList, type WordList } from './word-list.js';

/** A synthesized prompt. */
export interface SynthesizedPrompt {
  text: string;
  /** Token count under the run's tokenizer; equals the requested input length. */
  tokens: number;
}

/** Raised for an impossible layout (too many ids) or a prompt that cannot be made exact. */
export class PromptSynthesisError extends TokenloadError {
  override readonly name = 'PromptSynthesisError';
  constructor(message: string) {
    super('E_PROMPT', message);
  }
}

/** Builds exact-length prompts lazily, one request at a time. */
export class PromptSynthesizer {
  readonly blocks: BlockStore;
  /** Prompts that needed the repair loop (non-additive tokenizers only). */
  repaired = 0;

  constructor(
    private readonly tokenizer: TextTokenizer,
    private readonly wordList: WordList,
    seed: number,
    cacheEntries?: number,
  ) {
    this.blocks = new BlockStore(wordList.words, seed, cacheEntries);
  }

  /** Builds the word list for `tokenizer` and returns a synthesizer. */
  static create(tokenizer: TextTokenizer, seed: number, cacheEntries?: number): PromptSynthesizer {
    return new PromptSynthesizer(tokenizer, buildWordList(tokenizer), seed, cacheEntries);
  }

  /**
   * Prompt of exactly `inputLength` tokens made of the blocks `hashIds` of `blockSize` tokens.
   * `uniqueKey` seeds the uncached tail so different requests get different tails.
   * @throws {PromptSynthesisError} for too many ids for the length, or an unrepairable length.
   */
  synthesize(
    inputLength: number,
    hashIds: readonly number[],
    blockSize: number,
    uniqueKey: string,
  ): SynthesizedPrompt {
    const n = hashIds.length;
    if (n > 0 && inputLength <= (n - 1) * blockSize) {
      throw new PromptSynthesisError(
        `input_length ${inputLength} is too short for ${n} hash_ids of ${blockSize} tokens (needs > ${(n - 1) * blockSize}); check --isl-block-size`,
      );
    }
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const size = Math.min(blockSize, inputLength - i * blockSize);
      parts.push(this.blocks.block(hashIds[i] as number, size));
    }
    const tail = inputLength - n * blockSize;
    if (tail > 0) parts.push(this.blocks.fresh(uniqueKey, tail));
    const text = parts.join('');
    if (this.wordList.additive) return { text, tokens: inputLength };
    return this.repair(text, inputLength, uniqueKey);
  }

  private repair(text: string, target: number, key: string): SynthesizedPrompt {
    let current = text;
    for (let attempt = 0; attempt < 8; attempt++) {
      const count = this.tokenizer.count(current);
      if (count === target) {
        if (attempt > 0) this.repaired++;
        return { text: current, tokens: target };
      }
      current =
        count < target
          ? current + this.blocks.fresh(`${key}:fix${attempt}`, target - count)
          : current.slice(
              0,
              Math.max(0, current.length - Math.ceil(((count - target) * current.length) / count)),
            );
    }
    throw new PromptSynthesisError(
      `could not build a prompt of exactly ${target} tokens with tokenizer ${this.tokenizer.name}`,
    );
  }
}
