/**
 * Exact token counts of chat-templated prompts (`--apply-chat-template`), cheap enough for every
 * request: a 100k-token prompt is rendered (well under a millisecond) but not tokenized again.
 *
 * Why it is exact: with a tokenizer whose split pattern starts a new piece at a space between two
 * ASCII letters (`TextTokenizer.cutsAtSpaces`), a text cut at such spaces counts as the sum of its
 * parts. A message text whose count is known is cut at its first and last such space; its middle
 * is found verbatim in the rendered prompt, and when the rendered prompt has such a space on both
 * sides of it too, the count is: the known count − the counts of the text's head and tail + the
 * count of everything else of the rendered prompt (template tokens, short texts, the heads and
 * tails, tokenized for real). Anything not found that way (a template that changed the text, a
 * tokenizer without the property) is tokenized in full: slower, still exact.
 */
import type { ChatMessage } from '../dataset/types.js';
import type { ChatTemplate } from './chat-template.js';
import type { TextTokenizer } from './tokenizer.js';

/** Texts shorter than this many characters are tokenized in full within the rendered prompt. */
const MIN_CUT_CHARS = 2048;
/** A cut is looked for within this many characters of each end of a text. */
const CUT_WINDOW_CHARS = 1024;

function isAsciiLetter(code: number): boolean {
  return (code >= 97 && code <= 122) || (code >= 65 && code <= 90);
}

/** True when `text[at]` is a space between two ASCII letters. */
function isCut(text: string, at: number): boolean {
  return (
    at > 0 &&
    text.charCodeAt(at) === 32 &&
    isAsciiLetter(text.charCodeAt(at - 1)) &&
    isAsciiLetter(text.charCodeAt(at + 1))
  );
}

/** The first cut of `text` at or after `from` and before `to`, or -1. */
function firstCut(text: string, from: number, to: number): number {
  for (let i = from; i < to; i++) if (isCut(text, i)) return i;
  return -1;
}

/** The last cut of `text` before `to` and at or after `from`, or -1. */
function lastCut(text: string, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) if (isCut(text, i)) return i;
  return -1;
}

/** A message text with its exact token count. */
export interface CountedText {
  text: string;
  tokens: number;
}

/**
 * The exact token count of `rendered`, which holds the texts of `known` (in order) more or less
 * verbatim (see the module comment).
 */
export function countRendered(
  tokenizer: TextTokenizer,
  rendered: string,
  known: readonly CountedText[],
): number {
  if (tokenizer.cutsAtSpaces !== true) return tokenizer.count(rendered);
  let total = 0;
  let cursor = 0;
  for (const k of known) {
    const n = k.text.length;
    if (n < MIN_CUT_CHARS) continue;
    const a = firstCut(k.text, 1, Math.min(n, CUT_WINDOW_CHARS));
    const b = lastCut(k.text, Math.max(a + 1, n - CUT_WINDOW_CHARS), n - 1);
    if (a < 0 || b < 0) continue;
    const middle = k.text.slice(a, b);
    const at = rendered.indexOf(middle, cursor);
    if (at < 0 || !isCut(rendered, at) || !isCut(rendered, at + middle.length)) continue;
    const middleTokens = k.tokens - tokenizer.count(k.text.slice(0, a)) - tokenizer.count(k.text.slice(b));
    total += tokenizer.count(rendered.slice(cursor, at)) + middleTokens;
    cursor = at + middle.length;
  }
  return total + tokenizer.count(rendered.slice(cursor));
}

/** A synthesized user text fitted to a templated length. */
export interface FittedText {
  pieces: string[];
  /** Tokens of the text alone. */
  textTokens: number;
  /** Tokens of the one-message prompt through the template (the target, unless it was out of reach). */
  templatedTokens: number;
}

/** Counts prompts through a chat template; one per run (it learns the template's overhead). */
export class TemplateCounter {
  /** Template tokens of a one-user-message prompt, as last measured (starts at 0). */
  private userOverhead = 0;
  /** Synthesized prompts whose target length was shorter than the template alone (their text is empty). */
  shorterThanTemplate = 0;

  constructor(
    readonly template: ChatTemplate,
    private readonly tokenizer: TextTokenizer,
  ) {}

  /**
   * Exact tokens of `messages` rendered through the template; `textTokens[i]` is the token count of
   * `messages[i].content` when known (null: tokenized in full).
   * @throws {ChatTemplateError} what the template raised (prompt/chat-template.ts).
   */
  count(messages: readonly ChatMessage[], textTokens: readonly (number | null)[]): number {
    const rendered = this.template.render(messages);
    const known: CountedText[] = [];
    messages.forEach((m, i) => {
      const tokens = textTokens[i];
      if (typeof m.content === 'string' && tokens !== null && tokens !== undefined)
        known.push({ text: m.content, tokens });
    });
    return countRendered(this.tokenizer, rendered, known);
  }

  /**
   * The synthesized text `pieces` (`tokens` tokens of space-led words) shortened from its end so that
   * it, sent as one user message through the template, is `target` tokens. Out of reach (a target
   * below the template's own tokens), the text is emptied and the result says the real length.
   * @param additive true when the text's count is its number of words (prompt/word-list.ts).
   * @throws {ChatTemplateError} what the template raised (prompt/chat-template.ts).
   */
  fitUserText(pieces: readonly string[], tokens: number, target: number, additive: boolean): FittedText {
    let drop = Math.min(Math.max(this.userOverhead, 0), tokens);
    let fitted = this.measure(pieces, tokens, drop, additive);
    for (let attempt = 0; attempt < 4 && fitted.templatedTokens !== target; attempt++) {
      const next = Math.min(Math.max(drop + fitted.templatedTokens - target, 0), tokens);
      if (next === drop) break;
      drop = next;
      fitted = this.measure(pieces, tokens, drop, additive);
    }
    if (fitted.templatedTokens === target) this.userOverhead = target - fitted.textTokens;
    else if (fitted.textTokens === 0 && fitted.templatedTokens > target) this.shorterThanTemplate++;
    return fitted;
  }

  private measure(pieces: readonly string[], tokens: number, drop: number, additive: boolean): FittedText {
    const kept = dropLastWords(pieces, drop);
    const text = kept.join('');
    const textTokens = additive ? tokens - drop : this.tokenizer.count(text);
    const templatedTokens = this.count([{ role: 'user', content: text }], [textTokens]);
    return { pieces: kept, textTokens, templatedTokens };
  }
}

/** `pieces` without their last `words` words (every word starts with one space). */
export function dropLastWords(pieces: readonly string[], words: number): string[] {
  const out = [...pieces];
  let left = words;
  while (left > 0 && out.length > 0) {
    const last = out.pop() as string;
    let end = last.length;
    while (left > 0 && end > 0) {
      end = Math.max(last.lastIndexOf(' ', end - 1), 0);
      left--;
    }
    if (end > 0) out.push(last.slice(0, end));
  }
  return out;
}
