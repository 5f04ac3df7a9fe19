/**
 * `mooncake_trace` loader: Mooncake (Kimi) FAST'25 traces and AIPerf's extended Mooncake JSONL. Rows
 * carry a `timestamp` or `delay` in ms and one input mode; `hash_ids` name prefix-chained 512-token
 * blocks. Rows sharing a `session_id` form one session in file order; a row without one is its own
 * session. Source: AIPerf `src/aiperf/dataset/loader/mooncake_trace.py`.
 */
import { type ResolvedLoadOptions, resolveLoadOptions } from './load-options.js';
import { type MooncakeInputField, type MooncakeRow, parseMooncakeRow } from './mooncake-row.js';
import { groupByKey } from './sessions.js';
import { scanSharedIds, sharedIdsOfRows } from './shared-ids-scan.js';
import { collectTraceRows, emptySkipCounts, streamTraceRows } from './trace-rows.js';
import { initSynthesisCounts, scalesPrompt, synthesizeTurn } from './trace-synthesis.js';
import type { TraceSynthesis } from './types.js';
import {
  type ContextMode,
  type Conversation,
  type Dataset,
  DatasetError,
  type DatasetLoader,
  type LoadOptions,
  type SkipCounts,
  type StreamedTurn,
  type TraceStream,
  type Turn,
} from './types.js';

/** Tokens per `hash_ids` block in the Mooncake traces. */
export const MOONCAKE_BLOCK_SIZE = 512;

/** Prefix of the session id given to a row without `session_id`: `mooncake-<line>`. */
export const GENERATED_SESSION_PREFIX = 'mooncake-';

/**
 * Context mode of a session by its input mode (AIPerf conversation-context-mode reference):
 * synthetic and text rows are deltas (history and live replies accumulate); `messages` (history mode)
 * and `payload` rows are sent as stored.
 */
export function mooncakeContextMode(inputField: MooncakeInputField): ContextMode {
  return inputField === 'input_length' || inputField === 'text_input'
    ? 'deltas_without_responses'
    : 'message_array_with_responses';
}

function mixedSessionError(row: MooncakeRow, sessionId: string, first: MooncakeInputField): DatasetError {
  const { file, line } = row.turn.source;
  return new DatasetError(
    `${file}:${line}: field "${row.inputField}": session "${sessionId}" mixes input modes; earlier rows use ` +
      `"${first}", and a session's rows must all use the same one`,
    file,
    line,
    row.inputField,
  );
}

/**
 * Groups validated rows into sessions (first appearance order; turns in file order), sets each
 * turn's `index` and applies `synthesis` to each turn with its session id (trace-synthesis.ts; the
 * shared ids are counted over `rows` when it rescales prompts). A row
 * whose input mode differs from its session's first row is an error, or with `skipBadLines` is
 * dropped and counted in `skipped.badLines`.
 * @throws {DatasetError} for a session mixing input modes (unless skipping).
 */
export function buildMooncakeConversations(
  rows: readonly MooncakeRow[],
  skipBadLines: boolean,
  skipped: SkipCounts,
  synthesis?: TraceSynthesis,
): Conversation[] {
  const keys = rows.map((r) => r.sessionId ?? `${GENERATED_SESSION_PREFIX}${r.turn.source.line}`);
  const shared = scalesPrompt(synthesis) ? sharedIdsOfRows(rows) : undefined;
  const conversations: Conversation[] = [];
  for (const group of groupByKey(keys)) {
    const first = rows[group.rows[0]!]!.inputField;
    const turns: Turn[] = [];
    for (const rowIndex of group.rows) {
      const row = rows[rowIndex]!;
      if (row.inputField !== first) {
        if (!skipBadLines) throw mixedSessionError(row, group.key, first);
        skipped.badLines += 1;
        continue;
      }
      row.turn.index = turns.length;
      if (synthesis !== undefined) synthesizeTurn(row.turn, group.key, synthesis, shared, skipped);
      turns.push(row.turn);
    }
    conversations.push({ id: group.key, turns, contextMode: mooncakeContextMode(first) });
  }
  return conversations;
}

/**
 * Loads a Mooncake trace.
 * @throws {DatasetError} for a malformed row (file:line and field), a session mixing input modes, a
 *   Git LFS pointer, bad options, or an offset window (or max ISL) that leaves no rows.
 */
export async function loadMooncakeTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, MOONCAKE_BLOCK_SIZE);
  const { rows, skipped } = await collectTraceRows(file, resolved, parseMooncakeRow, undefined, {
    maxIsl: true,
  });
  initSynthesisCounts(skipped, resolved.synthesis);
  const { skipBadLines, synthesis } = resolved;
  const conversations = buildMooncakeConversations(rows, skipBadLines, skipped, synthesis);
  let turnCount = 0;
  for (const conversation of conversations) turnCount += conversation.turns.length;
  return { conversations, turnCount, blockSize: resolved.blockSize, skipped, file };
}

/**
 * Opens a Mooncake trace for a streaming replay: rows sharing a `session_id` join one session in
 * file order; a row without one is a one-turn session (`lastOfSession`). A row whose input mode
 * differs from its session's first row is an error, or with `skipBadLines` is dropped and counted.
 * Each kept row gets the same trace synthesis as in a whole-file load (when it rescales prompts, the
 * file is first read once, streaming, to count its shared ids, when the first row is asked for).
 * Memory: one map entry per `session_id` read (and the shared-id table, shared-ids.ts).
 * @throws {DatasetError} at once for bad options; row errors surface while iterating.
 */
export function streamMooncakeTrace(file: string, options: LoadOptions = {}): TraceStream {
  const resolved = resolveLoadOptions(file, options, MOONCAKE_BLOCK_SIZE);
  const skipped = emptySkipCounts();
  initSynthesisCounts(skipped, resolved.synthesis);
  const rows = streamTraceRows(file, resolved, parseMooncakeRow, skipped, undefined, {
    stopAtEndOffset: true,
    maxIsl: true,
    keepValues: options.keepRows === true,
  });
  return {
    file,
    blockSize: resolved.blockSize,
    skipped,
    turns: mooncakeTurns(file, rows, resolved, skipped),
  };
}

async function* mooncakeTurns(
  file: string,
  rows: AsyncIterable<MooncakeRow>,
  resolved: ResolvedLoadOptions,
  skipped: SkipCounts,
): AsyncGenerator<StreamedTurn> {
  const { skipBadLines, synthesis } = resolved;
  const shared = scalesPrompt(synthesis) ? await scanSharedIds(file, resolved, parseMooncakeRow) : undefined;
  const modeOf = new Map<string, MooncakeInputField>();
  for await (const row of rows) {
    const own = row.sessionId === undefined;
    const sessionId = row.sessionId ?? `${GENERATED_SESSION_PREFIX}${row.turn.source.line}`;
    const first = own ? row.inputField : (modeOf.get(sessionId) ?? row.inputField);
    if (!own) modeOf.set(sessionId, first);
    if (row.inputField !== first) {
      if (!skipBadLines) throw mixedSessionError(row, sessionId, first);
      skipped.badLines += 1;
      continue;
    }
    if (synthesis !== undefined) synthesizeTurn(row.turn, sessionId, synthesis, shared, skipped);
    yield {
      sessionId,
      turn: row.turn,
      order: 0,
      contextMode: mooncakeContextMode(first),
      lastOfSession: own,
      ...(row.value === undefined ? {} : { row: row.value }),
    };
  }
}

/** The `mooncake_trace` dataset type (block size 512, timestamped, streamable). */
export const mooncakeLoader: DatasetLoader = {
  name: 'mooncake_trace',
  defaultBlockSize: MOONCAKE_BLOCK_SIZE,
  timestamped: true,
  load: loadMooncakeTrace,
  stream: streamMooncakeTrace,
};
