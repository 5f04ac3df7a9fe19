/**
 * Fast path of the chat and completions parsers for streamed events: reads one `choices` payload
 * straight from its UTF-8 bytes, validating the whole JSON grammar but materializing only what a
 * record needs (text, reasoning, finish reasons, choice indexes, `usage`, the server's own timing
 * from a top-level `metrics` or `timings` object, parsed only on the event that carries one), instead of
 * `JSON.parse` building every object and string of the event first.
 *
 * Contract: {@link scanChoices} returns exactly what the adapter's `parse(JSON.parse(text), true)`
 * returns for the same bytes, or `undefined` when the payload is outside the fast path; the caller
 * then parses the text the ordinary way (which also decides whether it is invalid JSON). Outside the
 * fast path: anything but a top-level object, invalid JSON, a non-null `error`, an escaped key, a
 * `message` object in a chat choice, a `tool_calls` array, a `function_call` object, nesting deeper
 * than 64.
 * Test: test/unit/choices-scan.test.ts compares both paths on random payloads.
 */
import { type ServerTiming, serverTimingOf } from '../record/server-timing.js';
import type { Usage } from '../record/types.js';
import { ChoicesMemo, type VaryingField } from './choices-memo.js';
import type { ParsedResponse, StreamScratch } from './types.js';

/** Which adapter's reading of a choice: chat (`delta`) or completions (`text`). */
export type ChoicesFlavor = 'chat' | 'completions';

const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const QUOTE = 0x22;
const PLUS = 0x2b;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const COLON = 0x3a;
const LBRACKET = 0x5b;
const BACKSLASH = 0x5c;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const MAX_DEPTH = 64;

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= ZERO && c <= NINE;
}

function isHex(c: number | undefined): boolean {
  return (
    c !== undefined && ((c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))
  );
}

/** One scan's cursor and findings; module-private and reused (scans never nest). */
class Scanner {
  b: Buffer = Buffer.alloc(0);
  p = 0;
  e = 0;
  chat = true;
  /** Content bounds of the last string scanned, and whether it had escapes. */
  s0 = 0;
  s1 = 0;
  escaped = false;
  text = '';
  reasoning = '';
  finishReason: string | null = null;
  choices: { index: number; finishReason: string | null }[] | undefined;
  usageStart = -1;
  usageEnd = -1;
  /** Bounds of the top-level `metrics` and `timings` values (server timing), -1 when absent. */
  metricsStart = -1;
  metricsEnd = -1;
  timingsStart = -1;
  timingsEnd = -1;
  wholeCompletion = false;
  /** Per-message findings of the last `delta` object. */
  mText = '';
  mReasoning = '';
  mReasoningContent = '';
  /**
   * The last text member of the (last) choice's message, when it is an unescaped string: its key and
   * content bounds. Another payload that differs only inside that string parses the same but for it
   * (see {@link ChoicesMemo}). `candKey` is -1 when there is no such member.
   */
  candKey = -1;
  candS0 = 0;
  candS1 = 0;
  /** Whether the last {@link Scanner.textValue} read a string. */
  private wasString = false;

  run(bytes: Buffer, start: number, end: number, flavor: ChoicesFlavor): ParsedResponse | undefined {
    const parsed = this.scan(bytes, start, end, flavor);
    this.b = EMPTY;
    return parsed;
  }

  private scan(bytes: Buffer, start: number, end: number, flavor: ChoicesFlavor): ParsedResponse | undefined {
    this.b = bytes;
    this.p = start;
    this.e = end;
    this.chat = flavor === 'chat';
    this.resetChoices();
    this.usageStart = -1;
    this.metricsStart = -1;
    this.timingsStart = -1;
    this.wholeCompletion = false;
    this.ws();
    if (this.b[this.p] !== LBRACE || !this.topObject()) return undefined;
    this.ws();
    if (this.p !== this.e) return undefined;
    let usage: Usage | null = null;
    if (this.usageStart >= 0) {
      try {
        usage = JSON.parse(this.b.toString('utf8', this.usageStart, this.usageEnd)) as Usage;
      } catch {
        return undefined;
      }
    }
    const wholeChat = this.chat && this.wholeCompletion;
    const parsed: ParsedResponse = {
      text: wholeChat ? '' : this.text,
      reasoning: wholeChat ? '' : this.reasoning,
      usage,
      finishReason: this.finishReason,
      error: null,
    };
    if (this.choices !== undefined) parsed.choices = this.choices;
    if (this.metricsStart >= 0 || this.timingsStart >= 0) {
      let timing: ServerTiming | undefined;
      try {
        timing = this.serverTiming();
      } catch {
        return undefined;
      }
      if (timing !== undefined) parsed.serverTiming = timing;
    }
    return parsed;
  }

  /** The server timing of the top-level `metrics` / `timings` values scanned (only on the event that has one). */
  private serverTiming(): ServerTiming | undefined {
    const valueAt = (start: number, end: number): unknown =>
      start < 0 ? undefined : JSON.parse(this.b.toString('utf8', start, end));
    return serverTimingOf(
      valueAt(this.metricsStart, this.metricsEnd),
      valueAt(this.timingsStart, this.timingsEnd),
    );
  }

  private resetChoices(): void {
    this.candKey = -1;
    this.text = '';
    this.reasoning = '';
    this.finishReason = null;
    this.choices = undefined;
  }

  private ws(): void {
    const b = this.b;
    let p = this.p;
    while (p < this.e) {
      const c = b[p];
      if (c !== SPACE && c !== LF && c !== CR && c !== TAB) break;
      p++;
    }
    this.p = p;
  }

  /** At `{`: calls `member` for each key (cursor at its value); false on a syntax error or bail. */
  private object(depth: number, level: number): boolean {
    if (depth > MAX_DEPTH) return false;
    this.p++;
    this.ws();
    if (this.b[this.p] === RBRACE && this.p < this.e) {
      this.p++;
      return true;
    }
    for (;;) {
      if (this.p >= this.e || this.b[this.p] !== QUOTE || !this.string()) return false;
      const key = this.escaped ? KEY_ESCAPED : this.keyId();
      this.ws();
      if (this.p >= this.e || this.b[this.p] !== COLON) return false;
      this.p++;
      this.ws();
      if (!this.member(level, key, depth)) return false;
      this.ws();
      if (this.p >= this.e) return false;
      const c = this.b[this.p++];
      if (c === RBRACE) return true;
      if (c !== COMMA) return false;
      this.ws();
    }
  }

  private topObject(): boolean {
    return this.object(1, TOP);
  }

  /** Reads the value of member `key` of an object at `level` (cursor at the value). */
  private member(level: number, key: number, depth: number): boolean {
    if (level === SKIP) return this.value(depth);
    if (level === TOP) return this.topMember(key, depth);
    if (level === CHOICE) return this.choiceMember(key, depth);
    return this.messageMember(key, depth);
  }

  private topMember(key: number, depth: number): boolean {
    if (key === KEY_ESCAPED) return false;
    if (key === KEY_CHOICES) return this.choicesValue(depth);
    if (key === KEY_USAGE) {
      if (this.b[this.p] !== LBRACE || this.p >= this.e) {
        this.usageStart = -1;
        return this.value(depth);
      }
      const start = this.p;
      if (!this.value(depth)) return false;
      this.usageStart = start;
      this.usageEnd = this.p;
      return true;
    }
    if (key === KEY_ERROR) return this.literal('null');
    if (key === KEY_METRICS || key === KEY_TIMINGS) {
      const start = this.p;
      if (!this.value(depth)) return false;
      if (key === KEY_METRICS) [this.metricsStart, this.metricsEnd] = [start, this.p];
      else [this.timingsStart, this.timingsEnd] = [start, this.p];
      return true;
    }
    if (key === KEY_OBJECT) {
      if (this.b[this.p] !== QUOTE || this.p >= this.e) {
        this.wholeCompletion = false;
        return this.value(depth);
      }
      if (!this.string() || this.escaped) return false;
      this.wholeCompletion = this.rangeIs(this.s0, this.s1, 'chat.completion');
      return true;
    }
    return this.value(depth);
  }

  private choicesValue(depth: number): boolean {
    this.resetChoices();
    if (this.b[this.p] !== LBRACKET || this.p >= this.e) return this.value(depth);
    this.p++;
    this.ws();
    if (this.b[this.p] === RBRACKET && this.p < this.e) {
      this.p++;
      return true;
    }
    let position = 0;
    for (;;) {
      if (this.p >= this.e) return false;
      if (this.b[this.p] === LBRACE) {
        if (!this.choice(position, depth + 1)) return false;
        position++;
      } else if (!this.value(depth + 1)) return false;
      this.ws();
      if (this.p >= this.e) return false;
      const c = this.b[this.p++];
      if (c === RBRACKET) return true;
      if (c !== COMMA) return false;
      this.ws();
    }
  }

  /** Per-choice findings while its object is read. */
  private cIndex: number | undefined;
  private cFinish = '';
  private cText = '';
  private cReasoning = '';

  private choice(position: number, depth: number): boolean {
    this.candKey = -1;
    this.cIndex = undefined;
    this.cFinish = '';
    this.cText = '';
    this.cReasoning = '';
    if (!this.object(depth, CHOICE)) return false;
    const finishReason = this.cFinish === '' ? null : this.cFinish;
    if (finishReason !== null) this.finishReason = finishReason;
    this.choices ??= [];
    this.choices.push({ index: this.cIndex ?? position, finishReason });
    this.text += this.cText;
    this.reasoning += this.cReasoning;
    return true;
  }

  private choiceMember(key: number, depth: number): boolean {
    if (key === KEY_ESCAPED) return false;
    const c = this.b[this.p];
    if (key === KEY_INDEX) {
      if (c !== MINUS && !isDigit(c)) {
        this.cIndex = undefined;
        return this.value(depth);
      }
      const start = this.p;
      if (!this.number()) return false;
      this.cIndex = this.numberAt(start, this.p);
      return true;
    }
    if (key === KEY_FINISH_REASON) {
      const text = this.textValue(depth);
      if (text === null) return false;
      this.cFinish = text;
      return true;
    }
    if (this.chat && key === KEY_DELTA) {
      this.candKey = -1;
      this.cText = '';
      this.cReasoning = '';
      if (c !== LBRACE) return this.value(depth);
      this.mText = '';
      this.mReasoning = '';
      this.mReasoningContent = '';
      if (!this.object(depth + 1, MESSAGE)) return false;
      this.cText = this.mText;
      this.cReasoning = this.mReasoningContent || this.mReasoning;
      return true;
    }
    if (this.chat && key === KEY_MESSAGE) return c !== LBRACE && this.value(depth);
    if (!this.chat && key === KEY_TEXT) {
      const text = this.textValue(depth);
      if (text === null) return false;
      this.cText = text;
      this.noteCandidate(key);
      return true;
    }
    return this.value(depth);
  }

  private messageMember(key: number, depth: number): boolean {
    if (key === KEY_ESCAPED) return false;
    if (key === KEY_CONTENT || key === KEY_REASONING_CONTENT || key === KEY_REASONING) {
      const text = this.textValue(depth);
      if (text === null) return false;
      if (key === KEY_CONTENT) this.mText = text;
      else if (key === KEY_REASONING) this.mReasoning = text;
      else this.mReasoningContent = text;
      this.noteCandidate(key);
      return true;
    }
    if (key === KEY_TOOL_CALLS && this.b[this.p] === LBRACKET) return false;
    if (key === KEY_FUNCTION_CALL && this.b[this.p] === LBRACE) return false;
    return this.value(depth);
  }

  /** A member's value as `asText` reads it: the string, or '' for any other value; null on a syntax error. */
  private textValue(depth: number): string | null {
    this.wasString = this.b[this.p] === QUOTE && this.p < this.e;
    if (!this.wasString) return this.value(depth) ? '' : null;
    if (!this.string()) return null;
    return this.stringText();
  }

  /** Records the text member just read as the candidate (or clears it: not a plain string). */
  private noteCandidate(key: number): void {
    if (!this.wasString || this.escaped) {
      this.candKey = -1;
      return;
    }
    this.candKey = key;
    this.candS0 = this.s0;
    this.candS1 = this.s1;
  }

  /** Skips any JSON value at the cursor, validating it. */
  private value(depth: number): boolean {
    if (this.p >= this.e) return false;
    const c = this.b[this.p];
    if (c === QUOTE) return this.string();
    if (c === LBRACE) return this.object(depth + 1, SKIP);
    if (c === LBRACKET) return this.array(depth + 1);
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    return this.number();
  }

  private array(depth: number): boolean {
    if (depth > MAX_DEPTH) return false;
    this.p++;
    this.ws();
    if (this.b[this.p] === RBRACKET && this.p < this.e) {
      this.p++;
      return true;
    }
    for (;;) {
      if (!this.value(depth)) return false;
      this.ws();
      if (this.p >= this.e) return false;
      const c = this.b[this.p++];
      if (c === RBRACKET) return true;
      if (c !== COMMA) return false;
      this.ws();
    }
  }

  private literal(word: string): boolean {
    if (this.p + word.length > this.e) return false;
    for (let i = 0; i < word.length; i++) if (this.b[this.p + i] !== word.charCodeAt(i)) return false;
    this.p += word.length;
    return true;
  }

  /** JSON number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`. */
  private number(): boolean {
    const b = this.b;
    let p = this.p;
    if (b[p] === MINUS) p++;
    if (b[p] === ZERO && p < this.e) p++;
    else p = this.digits(p);
    if (p < 0) return false;
    if (b[p] === DOT && p < this.e) {
      p = this.digits(p + 1);
      if (p < 0) return false;
    }
    if ((b[p] === 0x65 || b[p] === 0x45) && p < this.e) {
      p++;
      if ((b[p] === PLUS || b[p] === MINUS) && p < this.e) p++;
      p = this.digits(p);
      if (p < 0) return false;
    }
    this.p = p;
    return true;
  }

  /** End of a run of one or more digits starting at `p`, or -1 when there is none. */
  private digits(from: number): number {
    let p = from;
    while (p < this.e && isDigit(this.b[p])) p++;
    return p === from ? -1 : p;
  }

  /** The value of a validated number: small non-negative integers directly, else as JSON.parse does. */
  private numberAt(start: number, end: number): number {
    if (end - start === 1) return (this.b[start] as number) - ZERO;
    return Number(this.b.toString('latin1', start, end));
  }

  /** At `"`: scans a string, validating escapes and rejecting raw control characters. */
  private string(): boolean {
    const b = this.b;
    const e = this.e;
    let p = this.p + 1;
    let escaped = false;
    while (p < e) {
      const c = b[p] as number;
      if (c === QUOTE) {
        this.s0 = this.p + 1;
        this.s1 = p;
        this.escaped = escaped;
        this.p = p + 1;
        return true;
      }
      if (c === BACKSLASH) {
        escaped = true;
        const next = b[p + 1];
        if (next === 0x75) {
          if (p + 6 > e || !isHex(b[p + 2]) || !isHex(b[p + 3]) || !isHex(b[p + 4]) || !isHex(b[p + 5]))
            return false;
          p += 6;
          continue;
        }
        if (p + 1 >= e || !SIMPLE_ESCAPES.has(next as number)) return false;
        p += 2;
        continue;
      }
      if (c < SPACE) return false;
      p++;
    }
    return false;
  }

  /** The text of the last string scanned (its escapes resolved by JSON.parse). */
  private stringText(): string | null {
    if (!this.escaped) return this.b.toString('utf8', this.s0, this.s1);
    try {
      return JSON.parse(this.b.toString('utf8', this.s0 - 1, this.s1 + 1)) as string;
    } catch {
      return null;
    }
  }

  private rangeIs(start: number, end: number, name: string): boolean {
    if (end - start !== name.length) return false;
    for (let i = 0; i < name.length; i++) if (this.b[start + i] !== name.charCodeAt(i)) return false;
    return true;
  }

  /** Which known key the last (unescaped) string scanned is. */
  private keyId(): number {
    const candidates = KEYS_BY_LENGTH[this.s1 - this.s0];
    if (candidates === undefined) return KEY_OTHER;
    for (const id of candidates) if (this.rangeIs(this.s0, this.s1, KEYS[id] as string)) return id;
    return KEY_OTHER;
  }
}

const EMPTY = Buffer.alloc(0);
/** Object levels of {@link Scanner.object}: which member reader applies. */
const SKIP = 0;
const TOP = 1;
const CHOICE = 2;
const MESSAGE = 3;
const SIMPLE_ESCAPES = new Set([QUOTE, BACKSLASH, 0x2f, 0x62, 0x66, 0x6e, 0x72, 0x74]);
const KEYS = [
  'choices',
  'usage',
  'error',
  'object',
  'index',
  'finish_reason',
  'delta',
  'message',
  'text',
  'content',
  'reasoning_content',
  'reasoning',
  'tool_calls',
  'metrics',
  'timings',
  'function_call',
] as const;
const KEY_CHOICES = 0;
const KEY_USAGE = 1;
const KEY_ERROR = 2;
const KEY_OBJECT = 3;
const KEY_INDEX = 4;
const KEY_FINISH_REASON = 5;
const KEY_DELTA = 6;
const KEY_MESSAGE = 7;
const KEY_TEXT = 8;
const KEY_CONTENT = 9;
const KEY_REASONING_CONTENT = 10;
const KEY_REASONING = 11;
const KEY_TOOL_CALLS = 12;
const KEY_METRICS = 13;
const KEY_TIMINGS = 14;
const KEY_FUNCTION_CALL = 15;
const KEY_OTHER = -1;
const KEYS_BY_LENGTH: number[][] = [];
KEYS.forEach((key, id) => {
  const list = KEYS_BY_LENGTH[key.length] ?? [];
  list.push(id);
  KEYS_BY_LENGTH[key.length] = list;
});
const KEY_ESCAPED = -2;

const scanner = new Scanner();
const VARYING: Record<number, VaryingField> = {
  [KEY_CONTENT]: 'content',
  [KEY_REASONING_CONTENT]: 'reasoning_content',
  [KEY_REASONING]: 'reasoning',
  [KEY_TEXT]: 'text',
};

/** After a full scan: a memo for the next events, when the payload qualifies (see choices-memo.ts). */
function memoOf(parsed: ParsedResponse, bytes: Buffer, start: number, end: number): ChoicesMemo | undefined {
  const field = VARYING[scanner.candKey];
  const choice = parsed.choices?.[0];
  if (field === undefined || choice === undefined || parsed.choices?.length !== 1 || parsed.usage !== null)
    return undefined;
  if (parsed.serverTiming !== undefined) return undefined;
  if (scanner.chat && scanner.wholeCompletion) return undefined;
  const event = Buffer.allocUnsafe(end - start);
  bytes.copy(event, 0, start, end);
  return new ChoicesMemo(
    event,
    scanner.candS0 - start,
    scanner.candS1 - start,
    field,
    scanner.mText,
    scanner.mReasoningContent,
    scanner.mReasoning,
    choice.index,
    choice.finishReason,
  );
}

/**
 * Reads the streamed chat or completions payload in `bytes[start, end)` (UTF-8 JSON text).
 * @param scratch the stream's scratch state: events that differ from an earlier one of the same
 *   stream only in their text are recognized without a full scan (choices-memo.ts)
 * @returns what the adapter's `parse(JSON.parse(text), true)` returns, or `undefined` when the
 *   payload is outside the fast path (see the file comment); never throws
 */
export function scanChoices(
  bytes: Buffer,
  start: number,
  end: number,
  flavor: ChoicesFlavor,
  scratch?: StreamScratch,
): ParsedResponse | undefined {
  const memo = scratch?.memo;
  if (memo instanceof ChoicesMemo && (memo.field === 'text') === (flavor === 'completions')) {
    const hit = memo.match(bytes, start, end);
    if (hit !== undefined) return hit;
  }
  const parsed = scanner.run(bytes, start, end, flavor);
  if (parsed !== undefined && scratch !== undefined) {
    const next = memoOf(parsed, bytes, start, end);
    if (next !== undefined) scratch.memo = next;
  }
  return parsed;
}
