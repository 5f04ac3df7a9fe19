/**
 * `bailian_trace` loader: Alibaba Bailian (Qwen) usage traces, one JSON object per line:
 * `{chat_id, parent_chat_id, timestamp (s), input_length, output_length, type, turn, hash_ids}` with
 * 16-token blocks. Semantics follow AIPerf's `BailianTrace` model and `bailian_trace` loader
 * (`src/aiperf/dataset/loader/models.py`, `bailian_trace.py`): rows are linked into sessions through
 * `parent_chat_id`, each turn is sent self-contained (`message_array_with_responses`) because a row's
 * `input_length`/`hash_ids` already cover the history.
 */
import { resolveLoadOptions } from './load-options.js';
import { findChainRoots, groupByKey, NO_PARENT, sortRowsStable } from './sessions.js';
import { collectTraceRows, emptySkipCounts, streamTraceRows, type TraceRow } from './trace-rows.js';
import type {
  Conversation,
  Dataset,
  DatasetLoader,
  LoadOptions,
  SourceRef,
  StreamedTurn,
  TraceStream,
  Turn,
} from './types.js';
import {
  asObject,
  checkHashIdsFit,
  optionalInt,
  optionalIntArray,
  optionalString,
  requiredInt,
  requiredNonNegative,
} from './validate.js';

/** Tokens per `hash_ids` block in the public Bailian traces (`*_blksz_16.jsonl`). */
export const BAILIAN_BLOCK_SIZE = 16;

/** One validated Bailian row: its turn plus the linking fields. */
export interface BailianRow extends TraceRow {
  chatId: number;
  /** `parent_chat_id`; {@link NO_PARENT} (-1) for a root. */
  parentId: number;
  /** `turn`, the sort key inside a session (default 1). */
  turnNumber: number;
}

/**
 * Seconds → ms, rounded to the nanosecond so that e.g. 27.124 s gives exactly 27124 ms (a plain
 * `× 1000` leaves binary float noise that would break inclusive offset bounds).
 */
function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1e9) / 1e6;
}

/**
 * Validates one Bailian row and builds its turn (`timestampMs` in trace ms before speedup, index 0).
 * Field rules: `chat_id` int (required); `parent_chat_id` int (default -1); `timestamp` number of
 * seconds ≥ 0 (required); `input_length` int ≥ 1 (required); `output_length` int ≥ 1 (required; servers reject 0 max tokens);
 * `type` string (default ''); `turn` int (default 1); `hash_ids` int array (default []), and no more
 * ids than `input_length` needs at `blockSize`.
 * @throws {DatasetError} naming file, line and field.
 */
export function parseBailianRow(value: unknown, at: SourceRef, blockSize: number): BailianRow {
  const row = asObject(value, at);
  const chatId = requiredInt(row, 'chat_id', undefined, at);
  const parentId = optionalInt(row, 'parent_chat_id', undefined, NO_PARENT, at);
  const timestampMs = secondsToMs(requiredNonNegative(row, 'timestamp', at));
  const inputLength = requiredInt(row, 'input_length', 1, at);
  const maxTokens = requiredInt(row, 'output_length', 1, at);
  const requestType = optionalString(row, 'type', '', at);
  const turnNumber = optionalInt(row, 'turn', undefined, 1, at);
  const hashIds = optionalIntArray(row, 'hash_ids', at);
  checkHashIdsFit(hashIds.length, inputLength, blockSize, at);
  const turn: Turn = {
    index: 0,
    timestampMs,
    prompt: { kind: 'synthetic', inputLength, hashIds, blockSize },
    maxTokens,
    requestType,
    source: at,
  };
  return { turn, chatId, parentId, turnNumber };
}

/**
 * Groups validated rows into sessions: root = earliest ancestor present ({@link findChainRoots}),
 * session id = `String(root chat_id)`, sessions in order of first appearance, turns stably sorted by
 * `turn` (ties keep file order; timestamps are not used for ordering). Sets each turn's `index`.
 */
export function buildBailianConversations(rows: readonly BailianRow[]): Conversation[] {
  const roots = findChainRoots(
    rows.map((r) => r.chatId),
    rows.map((r) => r.parentId),
  );
  const turnNumbers = rows.map((r) => r.turnNumber);
  return groupByKey(roots).map((group) => {
    sortRowsStable(group.rows, turnNumbers);
    const turns = group.rows.map((rowIndex, index) => {
      const turn = rows[rowIndex]!.turn;
      turn.index = index;
      return turn;
    });
    return { id: String(group.key), turns, contextMode: 'message_array_with_responses' };
  });
}

/**
 * Loads a Bailian trace.
 * @throws {DatasetError} for a malformed row (file:line and field), a Git LFS pointer, bad options, or
 *   an offset window that leaves no rows.
 */
export async function loadBailianTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, BAILIAN_BLOCK_SIZE);
  const { rows, skipped } = await collectTraceRows(file, resolved, parseBailianRow);
  return {
    conversations: buildBailianConversations(rows),
    turnCount: rows.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/**
 * Opens a Bailian trace for a streaming replay. A row joins the session of its parent's root when
 * its parent was read earlier (and survived the offsets); otherwise it starts a session of its own
 * (a missing parent, `-1`, or a self-parent). That is {@link buildBailianConversations}' grouping for
 * any file where parents precede children, which the public traces guarantee (`chat_id` increases
 * with file order). Memory: one `chat_id → root` map entry per row read.
 * @throws {DatasetError} at once for bad options; row errors surface while iterating.
 */
export function streamBailianTrace(file: string, options: LoadOptions = {}): TraceStream {
  const resolved = resolveLoadOptions(file, options, BAILIAN_BLOCK_SIZE);
  const skipped = emptySkipCounts();
  const rows = streamTraceRows(file, resolved, parseBailianRow, skipped, undefined, {
    stopAtEndOffset: true,
  });
  return { file, blockSize: resolved.blockSize, skipped, turns: bailianTurns(rows) };
}

async function* bailianTurns(rows: AsyncIterable<BailianRow>): AsyncGenerator<StreamedTurn> {
  const rootOf = new Map<number, number>();
  for await (const row of rows) {
    const linked = row.parentId !== NO_PARENT && row.parentId !== row.chatId;
    const root = (linked ? rootOf.get(row.parentId) : undefined) ?? row.chatId;
    rootOf.set(row.chatId, root);
    yield {
      sessionId: String(root),
      turn: row.turn,
      order: row.turnNumber,
      contextMode: 'message_array_with_responses',
      lastOfSession: false,
    };
  }
}

/** The `bailian_trace` dataset type (block size 16, timestamped, streamable). */
export const bailianLoader: DatasetLoader = {
  name: 'bailian_trace',
  defaultBlockSize: BAILIAN_BLOCK_SIZE,
  timestamped: true,
  load: loadBailianTrace,
  stream: streamBailianTrace,
};
