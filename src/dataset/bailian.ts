/**
 * `bailian_trace` loader: Alibaba Bailian (Qwen) usage traces, one JSON object per line:
 * `{chat_id, parent_chat_id, timestamp (s), input_length, output_length, type, turn, hash_ids}` with
 * 16-token blocks. Semantics follow AIPerf's `BailianTrace` model and `bailian_trace` loader
 * (`src/aiperf/dataset/loader/models.py`, `bailian_trace.py`): rows are linked into sessions through
 * `parent_chat_id`, each turn is sent self-contained (`message_array_with_responses`) because a row's
 * `input_length`/`hash_ids` already cover the history. One difference: a row joins its parent's
 * session only when the parent comes earlier in the file and in time (bailian-links.ts), the same
 * rule for a streamed and a whole-file replay; AIPerf links to the earliest ancestor anywhere.
 * `chat_id`, `parent_chat_id` and `hash_ids` are read exactly, whatever their size (exact-ids.ts).
 * With {@link LoadOptions.sessionTrees} (a fixed-schedule replay, unless `--bailian-linear-sessions`)
 * the rows form trees instead: a sibling follow-up starts a branch session that waits for its parent
 * only (bailian-links.ts `placeOf`); each row's prompt is its own `hash_ids`, so a branch carries its
 * parent's history as the trace recorded it, with nothing to thread from the parent's request.
 */
import { type LinkFields, NO_PARENT, ParentLinker, type RowPlace } from './bailian-links.js';
import { resolveLoadOptions } from './load-options.js';
import { groupByKey, sortRowsStable } from './sessions.js';
import type { SharedIds } from './shared-ids.js';
import { scanSharedIds, sharedIdsOfRows } from './shared-ids-scan.js';
import { collectTraceRows, emptySkipCounts, streamTraceRows, type TraceRow } from './trace-rows.js';
import { initSynthesisCounts, scalesPrompt, synthesizeTurn } from './trace-synthesis.js';
import type {
  Conversation,
  Dataset,
  DatasetLoader,
  LoadOptions,
  SkipCounts,
  SourceRef,
  StreamedTurn,
  TraceId,
  TraceStream,
  TraceSynthesis,
  Turn,
} from './types.js';
import {
  asObject,
  checkHashIdsFit,
  optionalHashIds,
  optionalId,
  optionalInt,
  optionalString,
  requiredId,
  requiredInt,
  requiredNonNegative,
} from './validate.js';

/** Tokens per `hash_ids` block in the public Bailian traces (`*_blksz_16.jsonl`). */
export const BAILIAN_BLOCK_SIZE = 16;

/** One validated Bailian row: its turn plus the linking fields. */
export interface BailianRow extends TraceRow {
  /** `chat_id`, exact (a bigint beyond 2^53 − 1). */
  chatId: TraceId;
  /** `parent_chat_id`, exact; {@link NO_PARENT} (-1) for a root. */
  parentId: TraceId;
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
 * `type` string (default ''); `turn` int (default 1); `hash_ids` array of block hashes, integers from
 * 0 to 2^64 − 1 (default []), and no more ids than `input_length` needs at `blockSize`. Ids of any
 * size are kept exactly ({@link TraceId}).
 * @throws {DatasetError} naming file, line and field.
 */
export function parseBailianRow(value: unknown, at: SourceRef, blockSize: number): BailianRow {
  const row = asObject(value, at);
  const chatId = requiredId(row, 'chat_id', at);
  const parentId = optionalId(row, 'parent_chat_id', NO_PARENT, at);
  const timestampMs = secondsToMs(requiredNonNegative(row, 'timestamp', at));
  const inputLength = requiredInt(row, 'input_length', 1, at);
  const maxTokens = requiredInt(row, 'output_length', 1, at);
  const requestType = optionalString(row, 'type', '', at);
  const turnNumber = optionalInt(row, 'turn', undefined, 1, at);
  const hashIds = optionalHashIds(row, 'hash_ids', at);
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

function linkFields(row: BailianRow): LinkFields {
  const { chatId, parentId, turn } = row;
  return { chatId, parentId, timestampMs: turn.timestampMs as number, line: turn.source.line };
}

/** Rows dropped before linking, by `chat_id`, so a row naming one as parent says why it is unlinked. */
export interface DroppedChatIds {
  /** Rows the offset window dropped. */
  outsideWindow: TraceId[];
  /** Rows the synthesis max ISL dropped. */
  overMaxIsl: TraceId[];
}

/**
 * Groups validated rows (file order) into sessions: each row's root comes from a
 * {@link ParentLinker} (a row joins its parent's session only when the parent is an earlier row,
 * stamped no later), session id = the root's `chat_id` (`<chat_id>@<line>` for a root whose
 * `chat_id` repeats an earlier row's), sessions in order of first appearance,
 * turns stably sorted by `turn` (ties keep file order). Sets each turn's `index`, and applies
 * `synthesis` to each turn with its session id (trace-synthesis.ts; the shared ids are counted over
 * `rows` when it rescales prompts). With `trees`, sessions are the chains and branches of a tree
 * replay (`ParentLinker.placeOf`), turns in file order (each row follows its parent), each session
 * carrying its `treeId` and a branch its {@link BranchStart}; synthesis takes the tree's id.
 * @param skipped where rows not linked to the parent they name are counted (`unlinkedRows`).
 * @param dropped `chat_id`s of rows dropped before linking (named as such when a row names one).
 */
export function buildBailianConversations(
  rows: readonly BailianRow[],
  skipped: SkipCounts,
  dropped: DroppedChatIds = { outsideWindow: [], overMaxIsl: [] },
  synthesis?: TraceSynthesis,
  trees = false,
): Conversation[] {
  const linker = new ParentLinker(skipped);
  for (const chatId of dropped.outsideWindow) linker.droppedByWindow(chatId);
  for (const chatId of dropped.overMaxIsl) linker.droppedByMaxIsl(chatId);
  const places: RowPlace[] = rows.map((r) =>
    trees ? linker.placeOf(linkFields(r)) : linearPlace(linker.sessionOf(linkFields(r))),
  );
  const shared = scalesPrompt(synthesis) ? sharedIdsOfRows(rows) : undefined;
  const turnNumbers = rows.map((r) => r.turnNumber);
  return groupByKey(places.map((p) => p.sessionId)).map((group) => {
    if (!trees) sortRowsStable(group.rows, turnNumbers);
    const first = places[group.rows[0] as number] as RowPlace;
    const turns = group.rows.map((rowIndex, index) => {
      const turn = rows[rowIndex]!.turn;
      turn.index = index;
      if (synthesis !== undefined) synthesizeTurn(turn, first.treeId, synthesis, shared, skipped);
      return turn;
    });
    const conversation: Conversation = { id: group.key, turns, contextMode: 'message_array_with_responses' };
    if (trees) conversation.treeId = first.treeId;
    if (first.branch !== undefined) conversation.branch = first.branch;
    return conversation;
  });
}

function linearPlace(sessionId: string): RowPlace {
  return { sessionId, treeId: sessionId, depth: 0 };
}

/**
 * Loads a Bailian trace.
 * @throws {DatasetError} for a malformed row (file:line and field), a Git LFS pointer, bad options, or
 *   an offset window (or max ISL) that leaves no rows.
 */
export async function loadBailianTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, BAILIAN_BLOCK_SIZE);
  const dropped: DroppedChatIds = { outsideWindow: [], overMaxIsl: [] };
  const { rows, skipped } = await collectTraceRows(file, resolved, parseBailianRow, undefined, {
    onOutsideWindow: (row) => dropped.outsideWindow.push(row.chatId),
    maxIsl: true,
    onOverMaxIsl: (row) => dropped.overMaxIsl.push(row.chatId),
  });
  initSynthesisCounts(skipped, resolved.synthesis);
  return {
    conversations: buildBailianConversations(
      rows,
      skipped,
      dropped,
      resolved.synthesis,
      options.sessionTrees === true,
    ),
    turnCount: rows.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/**
 * Opens a Bailian trace for a streaming replay. Rows form sessions as they are read, by the rule of
 * {@link buildBailianConversations} (one {@link ParentLinker} over the rows in file order), so a
 * streamed replay groups every file exactly as a whole-file load does, and applies the same trace
 * synthesis to each row; rows not linked to the parent they name are counted in
 * `skipped.unlinkedRows` as they are read. When the synthesis rescales prompts, the file is first
 * read once, streaming, to count its shared ids (shared-ids.ts), when the first row is asked for.
 * @throws {DatasetError} at once for bad options; row errors surface while iterating.
 */
export function streamBailianTrace(file: string, options: LoadOptions = {}): TraceStream {
  const resolved = resolveLoadOptions(file, options, BAILIAN_BLOCK_SIZE);
  const skipped = emptySkipCounts();
  initSynthesisCounts(skipped, resolved.synthesis);
  const linker = new ParentLinker(skipped);
  const rows = streamTraceRows(file, resolved, parseBailianRow, skipped, undefined, {
    stopAtEndOffset: true,
    onOutsideWindow: (row) => linker.droppedByWindow(row.chatId),
    maxIsl: true,
    onOverMaxIsl: (row) => linker.droppedByMaxIsl(row.chatId),
    keepValues: options.keepRows === true,
  });
  const shared = async (): Promise<SharedIds | undefined> =>
    scalesPrompt(resolved.synthesis) ? scanSharedIds(file, resolved, parseBailianRow) : undefined;
  const trees = options.sessionTrees === true;
  const turns = bailianTurns(rows, linker, resolved.synthesis, shared, skipped, trees);
  return { file, blockSize: resolved.blockSize, skipped, turns };
}

async function* bailianTurns(
  rows: AsyncIterable<BailianRow>,
  linker: ParentLinker,
  synthesis: TraceSynthesis | undefined,
  sharedIds: () => Promise<SharedIds | undefined>,
  skipped: SkipCounts,
  trees: boolean,
): AsyncGenerator<StreamedTurn> {
  const shared = await sharedIds();
  for await (const row of rows) {
    const place = trees ? linker.placeOf(linkFields(row)) : linearPlace(linker.sessionOf(linkFields(row)));
    if (synthesis !== undefined) synthesizeTurn(row.turn, place.treeId, synthesis, shared, skipped);
    const streamed: StreamedTurn = {
      sessionId: place.sessionId,
      turn: row.turn,
      // A tree's chain is in file order (each row follows its parent): the line is its sort key.
      order: trees ? row.turn.source.line : row.turnNumber,
      contextMode: 'message_array_with_responses',
      lastOfSession: false,
      ...(row.value === undefined ? {} : { row: row.value }),
    };
    if (trees) streamed.treeId = place.treeId;
    if (place.branch !== undefined) streamed.branch = place.branch;
    yield streamed;
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
