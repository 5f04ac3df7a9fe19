/**
 * `mooncake_trace` loader: Mooncake (Kimi) FAST'25 traces and AIPerf's extended Mooncake JSONL. Rows
 * carry a `timestamp` or `delay` in ms and one input mode; `hash_ids` name prefix-chained 512-token
 * blocks. Rows sharing a `session_id` form one session in file order; a row without one is its own
 * session. Source: AIPerf `src/aiperf/dataset/loader/mooncake_trace.py`.
 */
import { ConfigError } from '../errors.js';
import { type ResolvedLoadOptions, resolveLoadOptions } from './load-options.js';
import { type MooncakeInputField, type MooncakeRow, parseMooncakeRow } from './mooncake-row.js';
import { groupByKey } from './sessions.js';
import { scanSharedIds, sharedIdsOfRows } from './shared-ids-scan.js';
import { collectTraceRows, emptySkipCounts, type RowParser, streamTraceRows } from './trace-rows.js';
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
 * synthetic and text rows are deltas (history and live replies accumulate), and so are `messages`
 * rows in `delta` message mode; `messages` (history mode) and `payload` rows are sent as stored.
 */
export function mooncakeContextMode(inputField: MooncakeInputField, delta = false): ContextMode {
  return inputField === 'input_length' || inputField === 'text_input' || delta
    ? 'deltas_without_responses'
    : 'message_array_with_responses';
}

/** What a session's first row set for the rows after it: its input and message modes, its latest `tools`. */
interface SessionState {
  inputField: MooncakeInputField;
  delta: boolean;
  /** The most recent `tools` of a delta session's rows (later rows without one inherit it). */
  tools?: unknown;
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

function mixedMessageModeError(row: MooncakeRow, sessionId: string, firstDelta: boolean): DatasetError {
  const { file, line } = row.turn.source;
  const mode = (delta: boolean): string => (delta ? '"delta"' : '"history" (the default)');
  return new DatasetError(
    `${file}:${line}: field "message_mode": session "${sessionId}" mixes message modes; earlier rows use ` +
      `${mode(firstDelta)}, this row ${mode(row.delta)}, and a session's rows must all use the same one`,
    file,
    line,
    'message_mode',
  );
}

/** Why `row` cannot join the session `state` describes, or undefined when it can. */
function sessionMismatch(row: MooncakeRow, sessionId: string, state: SessionState): DatasetError | undefined {
  if (row.inputField !== state.inputField) return mixedSessionError(row, sessionId, state.inputField);
  if (row.delta !== state.delta) return mixedMessageModeError(row, sessionId, state.delta);
  return undefined;
}

/**
 * A delta session's row without its own `tools` inherits the most recent one of the session's
 * earlier rows (AIPerf); a row with `tools` (or `extra.tools`) becomes the most recent.
 */
function inheritTools(turn: Turn, state: SessionState): void {
  if (!state.delta) return;
  const own = turn.extra?.tools;
  if (own !== undefined) state.tools = own;
  else if (state.tools !== undefined) turn.extra = { tools: state.tools, ...turn.extra };
}

/** Why a `delta` row cannot be replayed with this load's options, with the flag to name; null when it can. */
function deltaConflict(resolved: ResolvedLoadOptions, options: LoadOptions): [string, string] | null {
  if (resolved.startOffsetMs !== undefined || resolved.endOffsetMs !== undefined)
    return [
      'cannot be replayed with --fixed-schedule-start-offset / --fixed-schedule-end-offset (an offset ' +
        'window would cut the session, whose later rows hold only the messages they add); remove the ' +
        'offsets, or give the rows in history mode',
      '--fixed-schedule-start-offset',
    ];
  if (options.extraInputKeys?.includes('messages') === true)
    return [
      'cannot be sent with --extra-inputs messages (it would replace the history the session builds ' +
        'from its rows and the live replies); remove messages from --extra-inputs',
      '--extra-inputs',
    ];
  const mode = options.contextModeOverride;
  if (mode !== undefined && mode !== 'deltas_without_responses')
    return [
      `cannot be sent with --conversation-context-mode ${mode} (its rows hold only the messages they ` +
        'add, and the live replies are its assistant turns: it is always sent as ' +
        'deltas_without_responses); remove the flag, or give the rows in history mode',
      '--conversation-context-mode',
    ];
  return null;
}

/**
 * The row parser of a load: {@link parseMooncakeRow}, refusing a `delta` row (a configuration
 * conflict, never skipped as a bad line) when the load has an offset window (a window could cut a
 * delta session, whose later rows hold only what they add; AIPerf refuses it too), when
 * `--extra-inputs` sets `messages` (it would replace the history the session builds), or when
 * `--conversation-context-mode` forces another mode than the one a delta session is sent in.
 */
function rowParser(resolved: ResolvedLoadOptions, options: LoadOptions): RowParser<MooncakeRow> {
  const conflict = deltaConflict(resolved, options);
  if (conflict === null) return parseMooncakeRow;
  const [why, flag] = conflict;
  return (value, at, blockSize) => {
    const row = parseMooncakeRow(value, at, blockSize);
    if (!row.delta) return row;
    throw new ConfigError(`${at.file}:${at.line}: field "message_mode": a "delta" session ${why}`, flag);
  };
}

/**
 * Groups validated rows into sessions (first appearance order; turns in file order), sets each
 * turn's `index` and applies `synthesis` to each turn with its session id (trace-synthesis.ts; the
 * shared ids are counted over `rows` when it rescales prompts). A row
 * whose input mode or message mode differs from its session's first row is an error, or with
 * `skipBadLines` is dropped and counted in `skipped.badLines`. A delta session's row without `tools`
 * inherits the most recent earlier row's.
 * @throws {DatasetError} for a session mixing input modes or message modes (unless skipping).
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
    const first = rows[group.rows[0]!]!;
    const state: SessionState = { inputField: first.inputField, delta: first.delta };
    const turns: Turn[] = [];
    for (const rowIndex of group.rows) {
      const row = rows[rowIndex]!;
      const mismatch = sessionMismatch(row, group.key, state);
      if (mismatch !== undefined) {
        if (!skipBadLines) throw mismatch;
        skipped.badLines += 1;
        continue;
      }
      row.turn.index = turns.length;
      inheritTools(row.turn, state);
      if (synthesis !== undefined) synthesizeTurn(row.turn, group.key, synthesis, shared, skipped);
      turns.push(row.turn);
    }
    conversations.push({
      id: group.key,
      turns,
      contextMode: mooncakeContextMode(state.inputField, state.delta),
    });
  }
  return conversations;
}

/**
 * Loads a Mooncake trace.
 * @throws {DatasetError} for a malformed row (file:line and field), a session mixing input modes or
 *   message modes, a Git LFS pointer, bad options, or an offset window (or max ISL) that leaves no rows.
 * @throws {ConfigError} naming the file and line of a `delta` row when the load has an offset window
 *   or `extraInputKeys` holds `messages`.
 */
export async function loadMooncakeTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, MOONCAKE_BLOCK_SIZE);
  const { rows, skipped } = await collectTraceRows(file, resolved, rowParser(resolved, options), undefined, {
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
 * file order; a row without one is a one-turn session (`lastOfSession`). A row whose input mode or
 * message mode differs from its session's first row is an error, or with `skipBadLines` is dropped
 * and counted. A delta session's row without `tools` inherits the most recent earlier row's.
 * Each kept row gets the same trace synthesis as in a whole-file load (when it rescales prompts, the
 * file is first read once, streaming, to count its shared ids, when the first row is asked for).
 * Memory: one map entry per `session_id` read (and the shared-id table, shared-ids.ts).
 * @throws {DatasetError} at once for bad options; row errors surface while iterating (and the
 *   {@link ConfigError} of a `delta` row with an offset window or `--extra-inputs messages`).
 */
export function streamMooncakeTrace(file: string, options: LoadOptions = {}): TraceStream {
  const resolved = resolveLoadOptions(file, options, MOONCAKE_BLOCK_SIZE);
  const skipped = emptySkipCounts();
  initSynthesisCounts(skipped, resolved.synthesis);
  const rows = streamTraceRows(file, resolved, rowParser(resolved, options), skipped, undefined, {
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
  const stateOf = new Map<string, SessionState>();
  for await (const row of rows) {
    const own = row.sessionId === undefined;
    const sessionId = row.sessionId ?? `${GENERATED_SESSION_PREFIX}${row.turn.source.line}`;
    let state = own ? undefined : stateOf.get(sessionId);
    if (state === undefined) {
      state = { inputField: row.inputField, delta: row.delta };
      if (!own) stateOf.set(sessionId, state);
    }
    const mismatch = sessionMismatch(row, sessionId, state);
    if (mismatch !== undefined) {
      if (!skipBadLines) throw mismatch;
      skipped.badLines += 1;
      continue;
    }
    inheritTools(row.turn, state);
    if (synthesis !== undefined) synthesizeTurn(row.turn, sessionId, synthesis, shared, skipped);
    yield {
      sessionId,
      turn: row.turn,
      order: 0,
      contextMode: mooncakeContextMode(state.inputField, state.delta),
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
