/**
 * The vocabulary prompts are written in. A synthesized prompt is a run of "words", each a space
 * followed by lowercase ASCII letters that the tokenizer maps to exactly ONE token. Byte-level BPE
 * tokenizers (Qwen, Llama 3, GPT) pre-split text on such words, so a run of N words always
 * tokenizes to exactly N tokens, wherever it is cut or joined. That makes KV-cache blocks exact by
 * construction: no block-seam drift (AIPerf decodes corpus token slices and re-encodes them, so
 * its prompts can drift at seams), and no re-tokenization of whole prompts on the hot path.
 */
import type { TextTokenizer } from './tokenizer.js';

/** Words to build prompts from, and whether concatenations are provably additive for this tokenizer. */
export interface WordList {
  /** Words including their leading space, e.g. `' the'`. Each encodes to one token. */
  readonly words: readonly string[];
  /**
   * True when a random run of the words tokenized to exactly one token per word in the self-check;
   * false means prompts must be repaired by re-encoding (slower, still exact).
   */
  readonly additive: boolean;
}

const PIECE = /^(?:\u0120|\u2581)[a-z]{3,12}$/;
/** How many words to keep: enough variety that blocks differ, small enough to build fast. */
const MAX_WORDS = 4096;
/** Words in the additivity self-check run. */
const CHECK_WORDS = 4000;

function candidateIds(tokenizer: TextTokenizer): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (const [piece, id] of tokenizer.vocab()) {
    if (PIECE.test(piece)) out.push([id, ` ${piece.slice(1)}`]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * Picks up to 4,096 single-token words from the tokenizer's vocabulary (lowest ids first, which for
 * BPE are the most frequent merges), checking each encodes to one token, then self-checks that a
 * pseudo-random run of them tokenizes to exactly one token per word. Built once per tokenizer object.
 * @throws {Error} if the vocabulary has fewer than 64 usable words (then exact prompts are impossible
 *   by construction and the caller must not use this tokenizer for synthesis).
 */
export function buildWordList(tokenizer: TextTokenizer): WordList {
  let list = builtLists.get(tokenizer);
  if (list === undefined) {
    list = wordListOf(tokenizer);
    builtLists.set(tokenizer, list);
  }
  return list;
}

/** Word lists already built, by tokenizer (a list depends on its tokenizer only, and is read-only). */
const builtLists = new WeakMap<TextTokenizer, WordList>();

function wordListOf(tokenizer: TextTokenizer): WordList {
  const words: string[] = [];
  for (const [id, word] of candidateIds(tokenizer)) {
    const ids = tokenizer.encode(word);
    if (ids.length === 1 && ids[0] === id) words.push(word);
    if (words.length >= MAX_WORDS) break;
  }
  if (words.length < 64) {
    throw new Error(
      `tokenizer ${tokenizer.name}: only ${words.length} single-token words found; cannot synthesize exact prompts`,
    );
  }
  let x = 0x9e3779b9;
  let text = '';
  for (let i = 0; i < CHECK_WORDS; i++) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + i) >>> 0;
    text += words[x % words.length];
  }
  return { words, additive: tokenizer.count(text) === CHECK_WORDS };
}
