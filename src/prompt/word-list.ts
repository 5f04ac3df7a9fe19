/**
 * The vocabulary prompts are written in. A synthesized prompt is a run of "words", each a space
 * followed by lowercase ASCII letters that the tokenizer maps to exactly ONE token. Byte-level BPE
 * tokenizers (Qwen, Llama 3, GPT) pre-split text on such words, so a run of N words always
 * tokenizes to exactly N tokens, wherever it is cut or joined. That makes KV-cache blocks exact by
 * construction: no block-seam drift (AIPerf decodes corpus token slices and re-encodes them, so
 * its prompts can drift at seams), and no re-tokenization of whole prompts on the hot path.
 *
 * Picking the words costs a process ~0.4 s of CPU for Qwen3 (a scan of the vocabulary and one BPE
 * encode per word), so lists are also stored: `assets/word-lists/<fingerprint>.json`, one per
 * tokenizer the package ships, written by `npm run word-lists` and checked against a fresh pick by
 * `test/unit/word-list-stored.test.ts`. A stored list is used only for a tokenizer of the same
 * fingerprint (the bytes of its files) and the same picking rule, and after a sample of its words
 * encodes to its ids; anything else picks afresh. Either way the list, and so every prompt, is the same.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../util/package-root.js';
import type { TextTokenizer } from './tokenizer.js';

/** Words to build prompts from, and whether concatenations are provably additive for this tokenizer. */
export interface WordList {
  /** Words including their leading space, e.g. `' the'`. Each encodes to one token. */
  readonly words: readonly string[];
  /** The token id of each word, index for index. */
  readonly ids: readonly number[];
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
/** Seed of the self-check's pseudo-random run. */
const CHECK_SEED = 0x9e3779b9;

/**
 * The picking rule a stored list was made with; a list made with another rule is not used. Bump
 * the version when {@link pickWordList} changes in a way its constants do not show.
 */
export const WORD_LIST_RULE = `v1 piece=${PIECE.source} max=${MAX_WORDS} check=${CHECK_WORDS} seed=${CHECK_SEED}`;

/** Words of a stored list encoded again before it is used (spread over the list). */
const SPOT_CHECKS = 16;

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
 * pseudo-random run of them tokenizes to exactly one token per word. Built once per tokenizer
 * object; taken from a stored list when one matches the tokenizer (same result, no vocabulary scan).
 * @throws {Error} if the vocabulary has fewer than 64 usable words (then exact prompts are impossible
 *   by construction and the caller must not use this tokenizer for synthesis).
 */
export function buildWordList(tokenizer: TextTokenizer): WordList {
  let list = builtLists.get(tokenizer);
  if (list === undefined) {
    list = storedWordList(tokenizer) ?? pickWordList(tokenizer);
    builtLists.set(tokenizer, list);
  }
  return list;
}

/** Word lists already built, by tokenizer (a list depends on its tokenizer only, and is read-only). */
const builtLists = new WeakMap<TextTokenizer, WordList>();

/**
 * Picks the word list from the vocabulary, never from a stored list: what {@link buildWordList}
 * returns when no stored list matches, and what a stored list is made from and checked against.
 * @throws {Error} as {@link buildWordList}.
 */
export function pickWordList(tokenizer: TextTokenizer): WordList {
  const words: string[] = [];
  const ids: number[] = [];
  for (const [id, word] of candidateIds(tokenizer)) {
    const encoded = tokenizer.encode(word);
    if (encoded.length === 1 && encoded[0] === id) {
      words.push(word);
      ids.push(id);
    }
    if (words.length >= MAX_WORDS) break;
  }
  if (words.length < 64) {
    throw new Error(
      `tokenizer ${tokenizer.name}: only ${words.length} single-token words found; cannot synthesize exact prompts`,
    );
  }
  let x = CHECK_SEED;
  let text = '';
  for (let i = 0; i < CHECK_WORDS; i++) {
    x = (Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + i) >>> 0;
    text += words[x % words.length];
  }
  return { words, ids, additive: tokenizer.count(text) === CHECK_WORDS };
}

/** A stored word list: `assets/word-lists/<fingerprint>.json`. */
export interface StoredWordList extends WordList {
  /** {@link WORD_LIST_RULE} when it was picked. */
  rule: string;
  /** The tokenizer's {@link TextTokenizer.fingerprint}. */
  fingerprint: string;
}

/** The folder of the stored word lists shipped with the package. */
export function storedWordListDir(): string {
  return join(packageRoot(), 'assets', 'word-lists');
}

/** The stored list's file for a tokenizer `fingerprint`. */
export function storedWordListPath(fingerprint: string): string {
  return join(storedWordListDir(), `${fingerprint}.json`);
}

/** What a stored list file holds for `tokenizer` (the file `npm run word-lists` writes). */
export function storedWordListOf(tokenizer: TextTokenizer, list: WordList): StoredWordList {
  if (tokenizer.fingerprint === undefined) throw new Error(`tokenizer ${tokenizer.name} has no fingerprint`);
  const { words, ids, additive } = list;
  return { rule: WORD_LIST_RULE, fingerprint: tokenizer.fingerprint, additive, words, ids };
}

/**
 * The stored list for `tokenizer`, its words primed into the encoder's piece cache; null when
 * none is stored for its fingerprint and rule, the file is not a well-formed list, or a word of
 * the spot check does not encode to its id.
 */
function storedWordList(tokenizer: TextTokenizer): WordList | null {
  if (tokenizer.fingerprint === undefined) return null;
  const path = storedWordListPath(tokenizer.fingerprint);
  if (!existsSync(path)) return null;
  let stored: unknown;
  try {
    stored = JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
  if (!isStoredList(stored, tokenizer.fingerprint) || !spotCheck(tokenizer, stored)) return null;
  tokenizer.prime?.(stored.words.map((w, i) => [w, stored.ids[i] as number] as const));
  return { words: stored.words, ids: stored.ids, additive: stored.additive };
}

const WORD = /^ [a-z]{3,12}$/;

function isStoredList(v: unknown, fingerprint: string): v is StoredWordList {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<StoredWordList>;
  if (s.rule !== WORD_LIST_RULE || s.fingerprint !== fingerprint || typeof s.additive !== 'boolean')
    return false;
  const { words, ids } = s;
  if (!Array.isArray(words) || !Array.isArray(ids) || words.length !== ids.length) return false;
  if (words.length < 64 || words.length > MAX_WORDS) return false;
  return words.every((w) => typeof w === 'string' && WORD.test(w)) && ids.every((id) => Number.isInteger(id));
}

function spotCheck(tokenizer: TextTokenizer, list: WordList): boolean {
  const step = Math.max(1, Math.floor(list.words.length / SPOT_CHECKS));
  for (let i = 0; i < list.words.length; i += step) {
    const ids = tokenizer.encode(list.words[i] as string);
    if (ids.length !== 1 || ids[0] !== list.ids[i]) return false;
  }
  return true;
}
