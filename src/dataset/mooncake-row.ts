/**
 * Validation of one `mooncake_trace` row. Field rules follow AIPerf's `MooncakeTrace` model
 * (`src/aiperf/dataset/loader/models.py`): exactly one input mode (`input_length`, `text_input`,
 * `messages`, `payload`); optional `output_length`, `hash_ids` (with `input_length` only), `timestamp`
 * and `delay` (ms), `session_id`, `extra`, and `tools` / `message_mode` (with `messages` only;
 * `history`, the default, or `delta`).
 */
import type { TraceRow } from './trace-rows.js';
import { DatasetError, type PromptSpec, type SourceRef, type Turn } from './types.js';
import {
  asObject,
  checkHashIdsFit,
  fieldError,
  type JsonObject,
  optionalHashIds,
  optionalNonNegative,
  optionalObject,
  optionalString,
  requiredInt,
  sessionIdString,
} from './validate.js';

/** The four input modes; a row must carry exactly one of them. */
export const MOONCAKE_INPUT_FIELDS = ['input_length', 'text_input', 'messages', 'payload'] as const;

/** Name of a Mooncake input mode field. */
export type MooncakeInputField = (typeof MOONCAKE_INPUT_FIELDS)[number];

/** One validated Mooncake row. */
export interface MooncakeRow extends TraceRow {
  /** `session_id` as a string (integers are converted exactly); undefined when the row has none. */
  sessionId: string | undefined;
  /** Which input mode the row uses. */
  inputField: MooncakeInputField;
  /**
   * `"message_mode": "delta"`: the row's `messages` are only what it adds to its session's history
   * (the earlier rows' messages and the live replies, mooncake.ts). False for `history` (the default).
   */
  delta: boolean;
}

function isPresent(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function findInputField(row: JsonObject, at: SourceRef): MooncakeInputField {
  let found: MooncakeInputField | undefined;
  for (const field of MOONCAKE_INPUT_FIELDS) {
    if (!isPresent(row[field])) continue;
    if (found !== undefined) {
      const message = `${at.file}:${at.line}: field "${field}": a row takes exactly one of ${MOONCAKE_INPUT_FIELDS.join(', ')}; this row also has "${found}"`;
      throw new DatasetError(message, at.file, at.line, field);
    }
    found = field;
  }
  if (found === undefined) {
    const message = `${at.file}:${at.line}: field "input_length": a row needs exactly one of ${MOONCAKE_INPUT_FIELDS.join(', ')}; it has none`;
    throw new DatasetError(message, at.file, at.line, 'input_length');
  }
  return found;
}

function parseMessages(value: unknown, at: SourceRef): PromptSpec {
  if (!Array.isArray(value) || value.length === 0)
    throw fieldError(at, 'messages', 'a non-empty array', value);
  for (let i = 0; i < value.length; i += 1) {
    const message: unknown = value[i];
    if (typeof message !== 'object' || message === null || Array.isArray(message)) {
      throw fieldError(at, `messages[${i}]`, 'a message object', message);
    }
    const role = (message as JsonObject).role;
    if (typeof role !== 'string') throw fieldError(at, `messages[${i}].role`, 'a string', role);
    checkContent((message as JsonObject).content, `messages[${i}].content`, at);
  }
  return { kind: 'messages', messages: value };
}

/** What a message's `content` may be, as the error names it. */
const CONTENT_SHAPE = 'a string, null, or an array of content parts ({"type": "text", "text": …})';

/**
 * A message's `content`: absent (an assistant message with `tool_calls`), null, a string, or an
 * array of part objects, each with a string `type` and, for a `text` part, a string `text`.
 * @throws {DatasetError} naming `field` (e.g. `messages[2].content`) for any other shape.
 */
function checkContent(content: unknown, field: string, at: SourceRef): void {
  if (content === undefined || content === null || typeof content === 'string') return;
  if (!Array.isArray(content)) throw fieldError(at, field, CONTENT_SHAPE, content);
  content.forEach((part: unknown, j) => {
    const type = typeof part === 'object' && part !== null ? (part as JsonObject).type : undefined;
    if (typeof type !== 'string' || Array.isArray(part))
      throw fieldError(at, `${field}[${j}]`, 'a content part object with a string "type"', part);
    const text = (part as JsonObject).text;
    if (type === 'text' && typeof text !== 'string')
      throw fieldError(at, `${field}[${j}].text`, 'a string', text);
  });
}

function parsePrompt(
  row: JsonObject,
  field: MooncakeInputField,
  at: SourceRef,
  blockSize: number,
): PromptSpec {
  if (field !== 'input_length' && isPresent(row.hash_ids)) {
    throw fieldError(at, 'hash_ids', 'no hash_ids (allowed only with input_length)', row.hash_ids);
  }
  if (field !== 'messages') {
    if (isPresent(row.tools))
      throw fieldError(at, 'tools', 'no tools (allowed only with messages)', row.tools);
    if (isPresent(row.message_mode)) {
      throw fieldError(at, 'message_mode', 'no message_mode (allowed only with messages)', row.message_mode);
    }
  }
  switch (field) {
    case 'input_length': {
      const inputLength = requiredInt(row, 'input_length', 1, at);
      const hashIds = optionalHashIds(row, 'hash_ids', at);
      checkHashIdsFit(hashIds.length, inputLength, blockSize, at);
      return { kind: 'synthetic', inputLength, hashIds, blockSize };
    }
    case 'text_input': {
      const text = optionalString(row, 'text_input', undefined, at);
      return { kind: 'text', text: text ?? '' };
    }
    case 'messages':
      return parseMessages(row.messages, at);
    case 'payload':
      return { kind: 'payload', payload: optionalObject(row, 'payload', at) ?? {} };
  }
}

/**
 * Body fields for the turn: `extra`, with a `messages` row's `tools` placed under it (the row's own
 * `extra` keys win). Undefined when there is neither.
 */
function parseExtra(row: JsonObject, at: SourceRef): Record<string, unknown> | undefined {
  const extra = optionalObject(row, 'extra', at);
  const tools = row.tools;
  if (!isPresent(tools)) return extra;
  if (!Array.isArray(tools) || tools.length === 0) throw fieldError(at, 'tools', 'a non-empty array', tools);
  return { tools, ...extra };
}

/** The row's `message_mode`: true for `delta`, false for `history` or none. */
function isDeltaMode(row: JsonObject, at: SourceRef): boolean {
  const mode = row.message_mode;
  if (!isPresent(mode) || mode === 'history') return false;
  if (mode === 'delta') return true;
  throw fieldError(at, 'message_mode', '"history" or "delta"', mode);
}

/**
 * A delta row's `extra` may not set `messages`: the body's messages are the session's history plus
 * the row's own (AIPerf refuses it too).
 */
function checkDeltaExtra(extra: Record<string, unknown> | undefined, at: SourceRef): void {
  if (extra === undefined || !Object.hasOwn(extra, 'messages')) return;
  const message =
    `${at.file}:${at.line}: field "extra.messages": a "delta" row's extra may not set messages ` +
    "(the body carries the session's history and the row's own messages); remove it";
  throw new DatasetError(message, at.file, at.line, 'extra.messages');
}

/**
/** Fields only a Bailian row has; a Mooncake row with one is a Bailian trace read under the wrong type. */
const BAILIAN_ONLY_FIELDS = ['chat_id', 'parent_chat_id', 'turn'] as const;

/**
 * Refuses a Bailian row: its timestamps are seconds (Mooncake's are ms) and its parent links would
 * be dropped, so it must not replay as Mooncake.
 * @throws {DatasetError} naming the file, line and the Bailian field.
 */
function refuseBailianRow(row: JsonObject, at: SourceRef): void {
  const field = BAILIAN_ONLY_FIELDS.find((f) => f in row);
  if (field === undefined) return;
  const message = `${at.file}:${at.line}: field "${field}": a Bailian row (chat_id, parent_chat_id, turn; timestamps in seconds) read as mooncake_trace (timestamps in ms) would replay 1,000× too fast without its parent links; give --custom-dataset-type bailian_trace`;
  throw new DatasetError(message, at.file, at.line, field);
}

/**
 * Validates one Mooncake row and builds its turn (`timestampMs` in trace ms before speedup, index 0).
 * @throws {DatasetError} naming file, line and field: a Bailian field (`chat_id`, `parent_chat_id`,
 *   `turn`), not exactly one input mode, a field of the wrong
 *   type or range, `hash_ids` without `input_length` or with too many ids for `blockSize`, `tools` /
 *   `message_mode` without `messages`, `message_mode` other than `history` or `delta`, or a `delta`
 *   row whose `extra` sets `messages`.
 */
export function parseMooncakeRow(value: unknown, at: SourceRef, blockSize: number): MooncakeRow {
  const row = asObject(value, at);
  refuseBailianRow(row, at);
  const inputField = findInputField(row, at);
  const prompt = parsePrompt(row, inputField, at, blockSize);
  const delta = isDeltaMode(row, at);
  const extra = parseExtra(row, at);
  if (delta) checkDeltaExtra(extra, at);
  const turn: Turn = {
    index: 0,
    timestampMs: optionalNonNegative(row, 'timestamp', at),
    delayMs: optionalNonNegative(row, 'delay', at),
    prompt,
    maxTokens: isPresent(row.output_length) ? requiredInt(row, 'output_length', 1, at) : undefined,
    extra,
    source: at,
  };
  return { turn, sessionId: sessionIdString(row.session_id, 'session_id', at), inputField, delta };
}
