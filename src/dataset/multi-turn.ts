/**
 * `multi_turn` loader: one conversation per JSONL line, `{session_id?, turns: [turn, …]}` with turn
 * objects as in `text-turn.ts` (AIPerf `multi_turn`). Lines sharing a `session_id` are joined in file
 * order; a line without one is its own conversation. History accumulates with the live replies
 * (`deltas_without_responses`).
 *
 * A leading `role: "system"` turn is not sent on its own: it becomes a system message placed before
 * the first real turn's message, in that turn's `messages` prompt. Because the context mode resends
 * earlier turns' messages, the system message then opens every request of the conversation. Such a
 * turn may not carry `timestamp`, `delay`, `output_length` or `extra` (they would have no request to
 * apply to), and must be followed by another turn.
 *
 * Offsets drop a line by its first turn's `timestamp` (lines without one are kept); the speedup ratio
 * divides every turn's timestamp.
 */
import { resolveLoadOptions } from './load-options.js';
import { groupByKey } from './sessions.js';
import { TEXT_DATASET_BLOCK_SIZE } from './single-turn.js';
import { parseTextTurn, type TextTurn } from './text-turn.js';
import { collectTraceRows, type TraceRow } from './trace-rows.js';
import {
  type ChatMessage,
  type Conversation,
  type Dataset,
  DatasetError,
  type DatasetLoader,
  type LoadOptions,
  type SourceRef,
  type Turn,
} from './types.js';
import { asObject, fieldError, sessionIdString } from './validate.js';

/** Prefix of the conversation id of a line without `session_id`: `multi_turn-<line>`. */
export const MULTI_TURN_SESSION_PREFIX = 'multi_turn-';

/** One validated `multi_turn` line; `turn` is its first turn (the one offsets look at). */
export interface MultiTurnRow extends TraceRow {
  turns: TextTurn[];
  sessionId: string | undefined;
}

/**
 * Validates one `multi_turn` line.
 * @throws {DatasetError} naming file, line and field (`turns`, `turns[i].text`, …).
 */
export function parseMultiTurnRow(value: unknown, at: SourceRef): MultiTurnRow {
  const row = asObject(value, at);
  const sessionId = sessionIdString(row.session_id, 'session_id', at);
  const list = row.turns;
  if (!Array.isArray(list) || list.length === 0) throw fieldError(at, 'turns', 'a non-empty array', list);
  const turns = list.map((t, i) => parseTextTurn(t, `turns[${i}].`, { timing: true, sessionId: false }, at));
  return { turn: turns[0]!.turn, turns, sessionId };
}

function systemTurnError(turn: Turn, problem: string): DatasetError {
  const { file, line } = turn.source;
  return new DatasetError(
    `${file}:${line}: field "turns[0]": leading system turn ${problem}`,
    file,
    line,
    'turns[0]',
  );
}

/** The system message of a leading system turn, or undefined when the first turn is not one. */
function liftSystemTurn(turns: TextTurn[]): ChatMessage | undefined {
  const first = turns[0];
  if (first === undefined || first.role !== 'system') return undefined;
  const t = first.turn;
  if (t.timestampMs !== undefined || t.delayMs !== undefined || t.maxTokens !== undefined || t.extra) {
    throw systemTurnError(t, 'may not have timestamp, delay, output_length or extra');
  }
  if (turns.length < 2) throw systemTurnError(t, 'needs a turn after it');
  turns.shift();
  return { role: 'system', content: first.content };
}

function buildConversation(id: string, textTurns: TextTurn[]): Conversation {
  const system = liftSystemTurn(textTurns);
  const turns = textTurns.map((t, index) => {
    t.turn.index = index;
    return t.turn;
  });
  const head = textTurns[0];
  if (system !== undefined && head !== undefined) {
    head.turn.prompt = { kind: 'messages', messages: [system, { role: head.role, content: head.content }] };
  }
  return { id, turns, contextMode: 'deltas_without_responses' };
}

/**
 * Joins rows by `session_id` (first appearance order; turns in file order), lifts a leading system
 * turn, and sets turn indices.
 * @throws {DatasetError} for a leading system turn with timing/output fields or no turn after it.
 */
export function buildMultiTurnConversations(rows: readonly MultiTurnRow[]): Conversation[] {
  const keys = rows.map((r) => r.sessionId ?? `${MULTI_TURN_SESSION_PREFIX}${r.turn.source.line}`);
  return groupByKey(keys).map((group) =>
    buildConversation(
      group.key,
      group.rows.flatMap((i) => rows[i]!.turns),
    ),
  );
}

function applySpeedupToLaterTurns(rows: readonly MultiTurnRow[], speedupRatio: number): void {
  if (speedupRatio === 1) return;
  for (const row of rows) {
    for (const { turn } of row.turns.slice(1)) {
      if (turn.timestampMs !== undefined) turn.timestampMs /= speedupRatio;
    }
  }
}

/**
 * Loads a `multi_turn` JSONL file.
 * @throws {DatasetError} for a malformed line (file:line and field), a bad leading system turn, a Git
 *   LFS pointer, bad options, or a file with no usable line.
 */
export async function loadMultiTurn(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, TEXT_DATASET_BLOCK_SIZE);
  const { rows, skipped } = await collectTraceRows(file, resolved, parseMultiTurnRow);
  applySpeedupToLaterTurns(rows, resolved.speedupRatio);
  const conversations = buildMultiTurnConversations(rows);
  let turnCount = 0;
  for (const c of conversations) turnCount += c.turns.length;
  return { conversations, turnCount, blockSize: resolved.blockSize, skipped, file };
}

/** The `multi_turn` dataset type (JSONL conversations with history; not auto-promoted to a fixed schedule). */
export const multiTurnLoader: DatasetLoader = {
  name: 'multi_turn',
  defaultBlockSize: TEXT_DATASET_BLOCK_SIZE,
  timestamped: false,
  load: loadMultiTurn,
};
