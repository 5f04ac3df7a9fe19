/**
 * Validation of one text turn object, shared by the `single_turn`, `multi_turn` and `random_pool`
 * JSONL formats (AIPerf `SingleTurn` model, text modality only):
 * - `text` (string) or `texts` (non-empty array of strings or `{name?, contents: string[]}`), exactly
 *   one of them. Several texts are joined with a newline into one message.
 * - `role` (string, default `user`): a `user` turn becomes a `{kind:'text'}` prompt, any other role a
 *   one-message `{kind:'messages'}` prompt with that role.
 * - `timestamp` xor `delay` (ms ≥ 0), when the format allows timing.
 * - `session_id` (string or integer), `output_length` (integer ≥ 1 → `maxTokens`), `extra` (object).
 * - `image(s)`, `audio(s)`, `video(s)` are rejected: tokenload sends text only.
 * Errors name the field with the caller's prefix, e.g. `turns[2].text`.
 */
import type { NamedText, PromptSpec, SourceRef, Turn } from './types.js';
import { asObject, fieldError, type JsonObject, sessionIdString } from './validate.js';

/** Separator placed between the entries of `texts` in the one message they form. */
export const TEXTS_SEPARATOR = '\n';

/** Modality fields AIPerf accepts that tokenload does not send. */
export const UNSUPPORTED_MODALITY_FIELDS = ['image', 'images', 'audio', 'audios', 'video', 'videos'] as const;

/** What a format lets a turn carry. */
export interface TextTurnRules {
  /** Accept `timestamp` / `delay` (false for `random_pool`). */
  timing: boolean;
  /** Accept `session_id` (false for `random_pool` and inside `multi_turn` turns). */
  sessionId: boolean;
}

/** One validated text turn. */
export interface TextTurn {
  /** The turn, `index` 0. */
  turn: Turn;
  /** The message text (all `texts` joined). */
  content: string;
  /** The message role (`user` when absent). */
  role: string;
  /** `session_id` as a string; undefined when absent. */
  sessionId: string | undefined;
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function textsEntry(entry: unknown, field: string, at: SourceRef): string {
  if (typeof entry === 'string') return entry;
  const contents = typeof entry === 'object' && entry !== null ? (entry as JsonObject).contents : undefined;
  if (!Array.isArray(contents) || contents.length === 0) {
    throw fieldError(at, field, 'a string or {name, contents: [strings]}', entry);
  }
  contents.forEach((c, i) => {
    if (typeof c !== 'string') throw fieldError(at, `${field}.contents[${i}]`, 'a string', c);
  });
  return contents.join(TEXTS_SEPARATOR);
}

function parseContent(row: JsonObject, prefix: string, at: SourceRef): string {
  const hasText = isPresent(row.text);
  const hasTexts = isPresent(row.texts);
  if (hasText && hasTexts)
    throw fieldError(at, `${prefix}texts`, 'either text or texts, not both', row.texts);
  if (hasText) {
    if (typeof row.text !== 'string') throw fieldError(at, `${prefix}text`, 'a string', row.text);
    return row.text;
  }
  const texts = row.texts;
  if (!Array.isArray(texts) || texts.length === 0) {
    throw fieldError(at, `${prefix}${hasTexts ? 'texts' : 'text'}`, 'text or a non-empty texts array', texts);
  }
  return texts.map((entry, i) => textsEntry(entry, `${prefix}texts[${i}]`, at)).join(TEXTS_SEPARATOR);
}

/** The entries of `texts` by name, when at least one entry is `{name, contents}` with a string name. */
function namedTextsOf(row: JsonObject): NamedText[] | undefined {
  const texts = row.texts;
  if (!Array.isArray(texts)) return undefined;
  const named = texts.some((t) => typeof (t as JsonObject | null)?.name === 'string');
  if (!named) return undefined;
  return texts.map((t) =>
    typeof t === 'string'
      ? { name: '', contents: [t] }
      : {
          name: typeof (t as JsonObject).name === 'string' ? ((t as JsonObject).name as string) : '',
          contents: (t as JsonObject).contents as string[],
        },
  );
}

function optionalMs(row: JsonObject, field: string, prefix: string, at: SourceRef): number | undefined {
  const value = row[field];
  if (!isPresent(value)) return undefined;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw fieldError(at, `${prefix}${field}`, 'a number of ms >= 0', value);
  }
  return value;
}

function parseTiming(row: JsonObject, prefix: string, rules: TextTurnRules, at: SourceRef) {
  const timestampMs = optionalMs(row, 'timestamp', prefix, at);
  const delayMs = optionalMs(row, 'delay', prefix, at);
  if (!rules.timing && (timestampMs !== undefined || delayMs !== undefined)) {
    const field = timestampMs === undefined ? 'delay' : 'timestamp';
    throw fieldError(at, `${prefix}${field}`, 'no timing field in this dataset type', row[field]);
  }
  if (timestampMs !== undefined && delayMs !== undefined) {
    throw fieldError(at, `${prefix}delay`, 'either timestamp or delay, not both', row.delay);
  }
  return { timestampMs, delayMs };
}

function parseSessionId(row: JsonObject, prefix: string, rules: TextTurnRules, at: SourceRef) {
  const value = row.session_id;
  if (!isPresent(value)) return undefined;
  if (!rules.sessionId) throw fieldError(at, `${prefix}session_id`, 'no session_id here', value);
  return sessionIdString(value, `${prefix}session_id`, at);
}

function parseOutputLength(row: JsonObject, prefix: string, at: SourceRef): number | undefined {
  const value = row.output_length;
  if (!isPresent(value)) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw fieldError(at, `${prefix}output_length`, 'a positive integer', value);
  }
  return value as number;
}

function parseExtra(row: JsonObject, prefix: string, at: SourceRef): Record<string, unknown> | undefined {
  const value = row.extra;
  if (!isPresent(value)) return undefined;
  if (typeof value !== 'object' || Array.isArray(value))
    throw fieldError(at, `${prefix}extra`, 'a JSON object', value);
  return value as Record<string, unknown>;
}

function parseRole(row: JsonObject, prefix: string, at: SourceRef): string {
  const value = row.role;
  if (!isPresent(value)) return 'user';
  if (typeof value !== 'string' || value.length === 0)
    throw fieldError(at, `${prefix}role`, 'a role name', value);
  return value;
}

function rejectUnsupported(row: JsonObject, prefix: string, at: SourceRef): void {
  for (const field of UNSUPPORTED_MODALITY_FIELDS) {
    if (isPresent(row[field]))
      throw fieldError(at, `${prefix}${field}`, 'text only (no media inputs)', row[field]);
  }
}

/** The prompt of a single message: `text` for a user message, a one-message array otherwise. */
export function messagePrompt(role: string, content: string): PromptSpec {
  return role === 'user'
    ? { kind: 'text', text: content }
    : { kind: 'messages', messages: [{ role, content }] };
}

/**
 * Validates one turn object.
 * @param value the parsed JSON value.
 * @param prefix prepended to field names in errors (`''` for a whole line, `turns[3].` inside a row).
 * @throws {DatasetError} naming file, line and the prefixed field.
 */
export function parseTextTurn(value: unknown, prefix: string, rules: TextTurnRules, at: SourceRef): TextTurn {
  if (prefix.length > 0 && (typeof value !== 'object' || value === null || Array.isArray(value))) {
    throw fieldError(at, prefix.slice(0, -1), 'a JSON object', value);
  }
  const row = asObject(value, at);
  rejectUnsupported(row, prefix, at);
  const content = parseContent(row, prefix, at);
  const role = parseRole(row, prefix, at);
  const { timestampMs, delayMs } = parseTiming(row, prefix, rules, at);
  const maxTokens = parseOutputLength(row, prefix, at);
  const extra = parseExtra(row, prefix, at);
  const namedTexts = namedTextsOf(row);
  const turn: Turn = {
    index: 0,
    prompt: messagePrompt(role, content),
    source: at,
    ...(timestampMs === undefined ? {} : { timestampMs }),
    ...(delayMs === undefined ? {} : { delayMs }),
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(extra === undefined ? {} : { extra }),
    ...(namedTexts === undefined ? {} : { namedTexts }),
  };
  return { turn, content, role, sessionId: parseSessionId(row, prefix, rules, at) };
}
