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

import type { TraceId } from '../dataset/types.js';
import { TokenloadError } from '../errors.js';
import { runSteps, type Steps } from '../util/steps.js';
import { BlockStore } from './block-store.js';
import type { TextTokenizer } from './tokenizer.js';
import { buildWordList, type WordList } from './word-list.js';

/** A synthesized prompt. */
export interface SynthesizedPrompt {
  text: string;
  /** Token count under the run's tokenizer; equals the requested input length. */
  tokens: number;
}

/**
 * A synthesized prompt as the pieces it is made of (cached block texts, a fresh tail), not joined:
 * a long prompt is then copied once, straight into the request body's bytes (request/body-bytes.ts),
 * instead of being joined, JSON-escaped and encoded. Every piece is printable ASCII without a quote
 * or a backslash (words are a space and lowercase letters, prompt/word-list.ts), so its JSON form
 * and its UTF-8 bytes are its characters as they are.
 */
export interface PromptPieces {
  pieces: string[];
  /** Token count under the run's tokenizer; equals the requested input length. */
  tokens: number;
}

/** New text generated per step of {@link PromptSynthesizer.piecesInSteps}, tokens (~1.5 ms of work). */
export const SYNTHESIS_STEP_TOKENS = 8192;

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

  /** True when a prompt's token count is its number of words (prompt/word-list.ts), so text can be cut by words. */
  get additive(): boolean {
    return this.wordList.additive;
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
    hashIds: readonly TraceId[],
    blockSize: number,
    uniqueKey: string,
  ): SynthesizedPrompt {
    const { pieces, tokens } = this.synthesizePieces(inputLength, hashIds, blockSize, uniqueKey);
    return { text: pieces.length === 1 ? (pieces[0] as string) : pieces.join(''), tokens };
  }

  /**
   * The prompt {@link PromptSynthesizer.synthesize} builds, as its unjoined pieces.
   * @throws {PromptSynthesisError} as `synthesize` does.
   */
  synthesizePieces(
    inputLength: number,
    hashIds: readonly TraceId[],
    blockSize: number,
    uniqueKey: string,
  ): PromptPieces {
    return runSteps(this.piecesInSteps(inputLength, hashIds, blockSize, uniqueKey));
  }

  /**
   * {@link PromptSynthesizer.synthesizePieces} in steps: a step generates at most about
   * {@link SYNTHESIS_STEP_TOKENS} tokens of new text (blocks not cached, the fresh tail), so a
   * 120k-token prompt of new blocks can be built between sends instead of in one ~25 ms stretch.
   * The text is the same as built at once.
   * @throws {PromptSynthesisError} as `synthesize` does (from the first step).
   */
  *piecesInSteps(
    inputLength: number,
    hashIds: readonly TraceId[],
    blockSize: number,
    uniqueKey: string,
  ): Steps<PromptPieces> {
    const n = hashIds.length;
    if (n > 0 && inputLength <= (n - 1) * blockSize) {
      throw new PromptSynthesisError(
        `input_length ${inputLength} is too short for ${n} hash_ids of ${blockSize} tokens (needs > ${(n - 1) * blockSize}); check --isl-block-size`,
      );
    }
    const parts: string[] = [];
    let generated = 0;
    for (let i = 0; i < n; i++) {
      const size = Math.min(blockSize, inputLength - i * blockSize);
      const id = hashIds[i] as TraceId;
      if (generated >= SYNTHESIS_STEP_TOKENS) {
        generated = 0;
        yield;
      }
      if (!this.blocks.isCached(id, size)) generated += size;
      parts.push(this.blocks.block(id, size));
    }
    const tail = inputLength - n * blockSize;
    const source = tail > 0 ? this.blocks.freshSource(uniqueKey) : null;
    for (let left = tail; source !== null && left > 0; ) {
      if (generated >= SYNTHESIS_STEP_TOKENS) {
        generated = 0;
        yield;
      }
      const words = Math.min(left, SYNTHESIS_STEP_TOKENS);
      parts.push(this.blocks.draw(source, words));
      generated += words;
      left -= words;
    }
    if (this.wordList.additive) return { pieces: parts, tokens: inputLength };
    const repaired = this.repair(parts.join(''), inputLength, uniqueKey);
    return { pieces: [repaired.text], tokens: repaired.tokens };
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
