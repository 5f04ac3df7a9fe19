/**
 * Per-stream shortcut for {@link scanChoices}: consecutive events of one stream usually differ only
 * inside one string (`"content":"…"`: same id, model, created, index, finish_reason). After a full
 * scan of a single-choice payload without `usage`, the memo keeps the bytes before and after that
 * string. A later payload with exactly those bytes around a plain string (no quote, backslash or
 * control byte) is valid JSON with the same structure, so it parses to the remembered result with
 * that string replaced; it costs two `Buffer#compare` calls and a short scan instead of a full scan.
 * Test: test/unit/choices-scan.test.ts feeds the same event sequences with and without memo.
 */
import type { ParsedResponse } from './types.js';

/** The member of the choice whose string value varies: a chat `delta` field or completions `text`. */
export type VaryingField = 'content' | 'reasoning_content' | 'reasoning' | 'text';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SPACE = 0x20;

/** True when `bytes[start, end)` can sit between two quotes as-is: no quote, backslash or control byte. */
function isPlainString(bytes: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = bytes[i] as number;
    if (c === QUOTE || c === BACKSLASH || c < SPACE) return false;
  }
  return true;
}

/**
 * What a single-choice payload parsed to, minus its varying string, plus the bytes around it.
 * Results built from one memo share their (never mutated) `choices` array.
 */
export class ChoicesMemo {
  private readonly choices: ReadonlyArray<{ index: number; finishReason: string | null }>;

  /**
   * @param event copy of the whole payload the memo was taken from
   * @param prefixLength bytes of `event` up to and including the varying string's opening quote
   * @param suffixStart offset in `event` of the varying string's closing quote
   * @param field which member the varying string is
   * @param content the message's `content` text as parsed (chat)
   * @param reasoningContent its `reasoning_content` text (chat)
   * @param reasoning its `reasoning` text (chat)
   * @param index the choice's index
   * @param finishReason the choice's finish reason
   */
  constructor(
    private readonly event: Buffer,
    private readonly prefixLength: number,
    private readonly suffixStart: number,
    readonly field: VaryingField,
    readonly content: string,
    readonly reasoningContent: string,
    readonly reasoning: string,
    readonly index: number,
    readonly finishReason: string | null,
  ) {
    this.choices = Object.freeze([Object.freeze({ index, finishReason })]);
  }

  /** The parse of `bytes[start, end)` when it matches the memo, else undefined. */
  match(bytes: Buffer, start: number, end: number): ParsedResponse | undefined {
    const event = this.event;
    const from = start + this.prefixLength;
    const to = end - (event.length - this.suffixStart);
    if (to < from) return undefined;
    if (bytes.compare(event, 0, this.prefixLength, start, from) !== 0) return undefined;
    if (bytes.compare(event, this.suffixStart, event.length, to, end) !== 0) return undefined;
    if (!isPlainString(bytes, from, to)) return undefined;
    return this.parsed(bytes.toString('utf8', from, to));
  }

  private parsed(value: string): ParsedResponse {
    const field = this.field;
    let text: string;
    let reasoning: string;
    if (field === 'text') {
      text = value;
      reasoning = '';
    } else {
      text = field === 'content' ? value : this.content;
      const reasoningContent = field === 'reasoning_content' ? value : this.reasoningContent;
      reasoning = reasoningContent || (field === 'reasoning' ? value : this.reasoning);
    }
    return {
      text,
      reasoning,
      usage: null,
      finishReason: this.finishReason,
      error: null,
      choices: this.choices,
    };
  }
}
