/**
 * `single_turn` loader: one text request per JSONL line (fields in `text-turn.ts`; AIPerf
 * `single_turn`). Lines sharing a `session_id` form one conversation sent in file order, one request
 * at a time, WITHOUT history (`message_array_with_responses`): the id only orders them. A line without
 * `session_id` is its own conversation. `timestamp` / `delay` (ms) are kept on the turns; the type is
 * not auto-promoted to a fixed schedule (AIPerf promotes only trace types), pass `--fixed-schedule`.
 */
import { resolveLoadOptions } from './load-options.js';
import { groupByKey } from './sessions.js';
import { parseTextTurn } from './text-turn.js';
import { collectTraceRows, type TraceRow } from './trace-rows.js';
import type { Conversation, Dataset, DatasetLoader, LoadOptions, SourceRef } from './types.js';

/**
 * Block size reported for text datasets. Their prompts are literal text, so it is unused; 512 is
 * AIPerf's built-in default.
 */
export const TEXT_DATASET_BLOCK_SIZE = 512;

/** Prefix of the conversation id of a line without `session_id`: `single_turn-<line>`. */
export const SINGLE_TURN_SESSION_PREFIX = 'single_turn-';

/** One validated `single_turn` line. */
export interface SingleTurnRow extends TraceRow {
  sessionId: string | undefined;
}

/**
 * Validates one `single_turn` line.
 * @throws {DatasetError} naming file, line and field.
 */
export function parseSingleTurnRow(value: unknown, at: SourceRef): SingleTurnRow {
  const { turn, sessionId } = parseTextTurn(value, '', { timing: true, sessionId: true }, at);
  return { turn, sessionId };
}

/** Groups rows by `session_id` (first appearance order, turns in file order) and sets turn indices. */
export function buildSingleTurnConversations(rows: readonly SingleTurnRow[]): Conversation[] {
  const keys = rows.map((r) => r.sessionId ?? `${SINGLE_TURN_SESSION_PREFIX}${r.turn.source.line}`);
  return groupByKey(keys).map((group) => {
    const turns = group.rows.map((rowIndex, index) => {
      const turn = rows[rowIndex]!.turn;
      turn.index = index;
      return turn;
    });
    return { id: group.key, turns, contextMode: 'message_array_with_responses' };
  });
}

/**
 * Loads a `single_turn` JSONL file. Offsets drop lines by `timestamp` (lines without one are kept);
 * the speedup ratio divides timestamps.
 * @throws {DatasetError} for a malformed line (file:line and field), a Git LFS pointer, bad options,
 *   or a file with no usable line.
 */
export async function loadSingleTurn(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, TEXT_DATASET_BLOCK_SIZE);
  const { rows, skipped } = await collectTraceRows(file, resolved, parseSingleTurnRow);
  return {
    conversations: buildSingleTurnConversations(rows),
    turnCount: rows.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/** The `single_turn` dataset type (JSONL text requests; not auto-promoted to a fixed schedule). */
export const singleTurnLoader: DatasetLoader = {
  name: 'single_turn',
  defaultBlockSize: TEXT_DATASET_BLOCK_SIZE,
  timestamped: false,
  load: loadSingleTurn,
};
