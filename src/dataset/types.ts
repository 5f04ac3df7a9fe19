/**
 * Dataset model shared by every loader: a dataset is a list of conversations, each an ordered list
 * of turns. Loaders produce it; the prompt stage turns each {@link PromptSpec} into text lazily; the
 * timing stage schedules turns by `timestampMs` / `delayMs`.
 */
import { TokenloadError } from '../errors.js';
import { printable } from '../util/printable.js';

/**
 * How earlier turns of a conversation are carried into a later request.
 * Source: AIPerf reference "conversation-context-mode".
 * - `message_array_with_responses`: every turn is sent as stored, self-contained (Bailian, Mooncake
 *   `messages` in history mode).
 * - `deltas_without_responses`: earlier turns plus the live assistant replies (with their tool calls)
 *   are prepended (synthetic turns, Mooncake `input_length`/`text_input` and `delta` messages).
 * - `deltas_with_responses`: earlier turns with their pre-recorded replies; live replies dropped.
 */
export type ContextMode =
  | 'message_array_with_responses'
  | 'deltas_without_responses'
  | 'deltas_with_responses';

/** One text part of a message whose content is an array (OpenAI chat `{"type": "text", "text": …}`). */
export interface TextPart {
  type: 'text';
  text: string;
}

/**
 * One OpenAI chat message as it goes on the wire: its content a string, or an array of text parts
 * (a `random_pool` folder's request, one part per pool text, as AIPerf renders several texts).
 */
export interface ChatMessage {
  role: string;
  content: string | null | TextPart[];
  [key: string]: unknown;
}

/**
 * A message content as one text: the string itself, or the text parts' texts joined with one space
 * (as AIPerf and the simulator count a content array; parts without a string `text`, such as
 * images, add nothing); null for no content (null, or absent on an assistant message with tool calls).
 */
export function contentText(content: ChatMessage['content'] | undefined): string | null {
  if (content === null || content === undefined || typeof content === 'string') return content ?? null;
  return content.flatMap((p) => (typeof p.text === 'string' ? [p.text] : [])).join(' ');
}

/**
 * A trace identifier (a `hash_ids` block hash, a Bailian `chat_id`) read exactly, whatever its size:
 * a `number` when it is a safe integer (up to 2^53 − 1), a `bigint` only above that. The form is
 * canonical, so equal ids are equal `Map` keys and print the same digits (dataset/exact-ids.ts).
 */
export type TraceId = number | bigint;

/**
 * What a turn's prompt is made of.
 * - `synthetic`: a prompt of exactly `inputLength` tokens built from KV-cache blocks named by
 *   `hashIds` (`blockSize` tokens each; ids may be empty for a fully fresh prompt; 64-bit ids are
 *   {@link TraceId} bigints above 2^53 − 1).
 * - `text`: a literal prompt string (Mooncake `text_input`).
 * - `messages`: a literal message array (Mooncake `messages`).
 * - `payload`: a complete request body sent verbatim (Mooncake `payload`).
 */
export type PromptSpec =
  | { kind: 'synthetic'; inputLength: number; hashIds: readonly TraceId[]; blockSize: number }
  | { kind: 'text'; text: string }
  | { kind: 'messages'; messages: ChatMessage[] }
  | { kind: 'payload'; payload: Record<string, unknown> };

/** One named entry of a turn's `texts` (`name` '' when the entry had none). */
export interface NamedText {
  name: string;
  contents: string[];
}

/** Where a turn came from, for error messages and records: file path and 1-based line number. */
export interface SourceRef {
  file: string;
  line: number;
}

/** One request of a conversation. */
export interface Turn {
  /** 0-based position inside its conversation after sorting. */
  index: number;
  /**
   * Scheduled arrival in trace milliseconds, already converted to ms and divided by the synthesis
   * speedup ratio, rounded to the ns (Bailian seconds × 1000; Mooncake ms). Absent when the row has
   * no timestamp.
   */
  timestampMs?: number;
  /** Delay in ms after the previous turn completed (Mooncake `delay`); used when there is no timestamp. */
  delayMs?: number;
  prompt: PromptSpec;
  /** Requested output tokens (`output_length`); becomes `max_completion_tokens` / `max_tokens`. */
  maxTokens?: number;
  /** Trace request type kept for records (Bailian `type`: text, search, image, file, …). */
  requestType?: string;
  /** Body fields merged last, after `--extra-inputs` (Mooncake `extra`). Shallow merge. */
  extra?: Record<string, unknown>;
  /**
   * The `texts` entries of a JSONL turn, by name, when at least one is named (`{name, contents}`,
   * AIPerf's named texts): the rankings endpoints read their `query` and `passages` from them. The
   * prompt still holds every text joined, as the other endpoints send it.
   */
  namedTexts?: NamedText[];
  source: SourceRef;
}

/**
 * Where a branch session of a Bailian tree replay starts (bailian-links.ts): a row whose parent
 * already had a child. Its first turn is sent once its parent's request has completed (or failed),
 * at its own timestamp or then, whichever is later; never when the parent was never sent.
 */
export interface BranchStart {
  /** 1-based file line of the parent row: the request the branch's first turn waits for. */
  parentLine: number;
  /** The parent row's timestamp, trace ms (after the speedup ratio), as `Turn.timestampMs`. */
  parentTimestampMs: number;
  /**
   * Depth in its tree of the branch's first row (the root is 0, its child 1, …): its records'
   * `turn_index`; the branch's later rows follow on (depth + 1, …).
   */
  depth: number;
}

/** A session: turns sent in order, one in flight at a time. */
export interface Conversation {
  /**
   * Session id; for Bailian the root `chat_id` as a string (AIPerf semantics), for a branch session
   * of a tree replay `<root id>/<chat_id of its first row>` (`<root id>/<chat_id>@<line>` when that
   * `chat_id` repeats).
   */
  id: string;
  turns: Turn[];
  contextMode: ContextMode;
  /**
   * Bailian tree replay: the id of the tree's root session, on every session of a tree (the root's
   * own included); absent means the session's own id. Records name it as `conversation_id` and
   * `x-correlation-id`; sharding and sampling keep a tree together by it.
   */
  treeId?: string;
  /** Bailian tree replay: set on a branch session (see {@link BranchStart}); absent for a root. */
  branch?: BranchStart;
}

/** The id a session's requests are recorded under: its tree's root session id, else its own. */
export function treeIdOf(session: { id: string; treeId?: string }): string {
  return session.treeId ?? session.id;
}

/**
 * Why a Bailian row's `parent_chat_id` could not make it a later turn of its parent's session:
 * `later_row` the parent's row comes later in the file; `later_timestamp` the parent's row comes
 * earlier but is stamped after the row; `self` the row names itself; `outside_window` the rows with
 * that `chat_id` are outside the offset window; `over_max_isl` they were dropped by the synthesis
 * max ISL; `not_read` no row with that `chat_id` was read (absent from the file, or a skipped line).
 */
export type UnlinkedReason =
  | 'later_row'
  | 'later_timestamp'
  | 'self'
  | 'outside_window'
  | 'over_max_isl'
  | 'not_read';

/** One Bailian row replayed as a session of its own although it names a parent. */
export interface UnlinkedRow {
  /** 1-based line of the row. */
  line: number;
  /** `chat_id` and `parent_chat_id` as written (all digits). */
  chatId: string;
  parentChatId: string;
  reason: UnlinkedReason;
}

/**
 * Bailian rows whose `parent_chat_id` names no earlier row (by file order and timestamp) among the
 * rows read; each was replayed as a session of its own, in both the streamed and the whole-file
 * replay. `rows` holds the first {@link UNLINKED_ROWS_SHOWN} of them.
 */
export interface UnlinkedRows {
  count: number;
  rows: UnlinkedRow[];
}

/**
 * Bailian rows whose `chat_id` an earlier row read already had (bailian-links.ts: each root still
 * starts its own session; a child follows the latest such row). `rows` holds the first
 * {@link UNLINKED_ROWS_SHOWN} of them, each with its 1-based line and its `chat_id` as written.
 */
export interface RepeatedChatIds {
  count: number;
  rows: Array<{ line: number; chatId: string }>;
}

/** How many {@link UnlinkedRows} (and {@link RepeatedChatIds}) are named one by one. */
export const UNLINKED_ROWS_SHOWN = 5;

/** Counts of rows a loader dropped, by reason, so nothing disappears silently. */
export interface SkipCounts {
  beforeStartOffset: number;
  afterEndOffset: number;
  badLines: number;
  /**
   * Well-formed rows that describe no usable request (BurstGPT rows with 0 request tokens). Absent
   * for formats that have no such rows.
   */
  invalidRows?: number;
  /**
   * Rows kept whose output length was 0 in the trace (BurstGPT `Response tokens` 0: a failed
   * request, sent asking for 1 token). Absent for formats that have no such rows.
   */
  zeroOutputRows?: number;
  /**
   * Set when a streaming replay stopped reading at this 1-based line: the first row after the end
   * offset in a file whose timestamps had been non-decreasing so far. Rows after it were not read
   * (and are not in `afterEndOffset`).
   */
  unreadAfterLine?: number;
  /**
   * Rows kept, but not linked to the parent they name (Bailian); absent when every row with a
   * parent was linked, and for formats without parent links. Live while a stream is read.
   */
  unlinkedRows?: UnlinkedRows;
  /** Rows whose `chat_id` repeats an earlier row's (Bailian); absent when none does. */
  repeatedChatIds?: RepeatedChatIds;
  /**
   * Rows dropped because their trace `input_length` exceeds the synthesis max ISL
   * (`--synthesis-max-isl`); present only when that option is set. Live while a stream is read.
   */
  overMaxIsl?: number;
  /**
   * Rows kept whose (scaled) `output_length` was capped at `--synthesis-max-osl`; present only when
   * that option is set.
   */
  maxOslCapped?: number;
  /**
   * Rows kept whose prompt the prompt synthesis options could not scale (Mooncake `text_input`,
   * `messages` or `payload` rows: no `input_length`); present only when such an option is set.
   */
  promptUnscaled?: number;
  /**
   * What `--trace-session-sample-ratio` kept (dataset/session-sample.ts); present only with it.
   * Live while a stream is read.
   */
  sessionSample?: SessionSampleCounts;
}

/**
 * Sessions and rows a whole-session sample read and kept (the rows left after the offset window, bad
 * lines and synthesis drops). A streamed replay counts the rows read before it stopped.
 */
export interface SessionSampleCounts {
  /** `--trace-session-sample-ratio`, in (0, 1]. */
  ratio: number;
  /** The seed of the sample (`--random-seed`, resolved). */
  seed: number;
  sessionsRead: number;
  sessionsKept: number;
  rowsRead: number;
  rowsKept: number;
}

/** A loaded dataset. */
export interface Dataset {
  conversations: Conversation[];
  /** Total number of turns across all conversations. */
  turnCount: number;
  /** KV-cache block size in tokens that `hashIds` refer to (16 Bailian, 512 Mooncake, or `--isl-block-size`). */
  blockSize: number;
  skipped: SkipCounts;
  /** Path the dataset was read from. */
  file: string;
}

/** Options every trace loader understands. Offsets are inclusive, in trace ms before speedup. */
export interface LoadOptions {
  startOffsetMs?: number;
  endOffsetMs?: number;
  /** Timestamps are divided by this (AIPerf `--synthesis-speedup-ratio`); default 1. */
  speedupRatio?: number;
  /** Overrides the loader's default block size (`--isl-block-size`). */
  blockSize?: number;
  /** Skip malformed lines (counted in `skipped.badLines`) instead of failing. */
  skipBadLines?: boolean;
  /**
   * AIPerf's trace synthesis (`--synthesis-*` multipliers and caps), applied row by row
   * (dataset/trace-synthesis.ts); options left out take AIPerf's defaults. Bailian and Mooncake
   * traces only; other loaders ignore it.
   */
  synthesis?: Partial<TraceSynthesis>;
  /**
   * The keys `--extra-inputs` sets on every request body. A Mooncake `delta` row refuses `messages`
   * among them (it would replace the history its session builds). Other loaders ignore it.
   */
  extraInputKeys?: readonly string[];
  /**
   * `--conversation-context-mode`, when given. A Mooncake `delta` row refuses any mode but
   * `deltas_without_responses` (its rows hold only what they add, and the live replies are the
   * session's assistant turns). Other loaders ignore it.
   */
  contextModeOverride?: ContextMode;
  /**
   * Streamed loaders attach each row's JSON value as read to its {@link StreamedTurn} (`row`), for a
   * rewrite of the trace (`tokenload synthesize-trace`). Off for a replay (memory).
   */
  keepRows?: boolean;
  /**
   * `random_pool` from a folder: how many conversations to draw (one entry from each pool each;
   * `--conversation-num`, default 100) and the seed of the draws (`--random-seed`, default 0).
   * Other loaders ignore them.
   */
  poolDraws?: number;
  randomSeed?: number;
  /**
   * Bailian: replay the rows as trees (bailian-links.ts), a follow-up of a parent that already has a
   * child starting a branch session ({@link BranchStart}); false or absent: one linear session per
   * root, as AIPerf (`--bailian-linear-sessions`, and every replay that is not on a fixed schedule).
   * Other loaders ignore it.
   */
  sessionTrees?: boolean;
}

/**
 * One validated trace row of a streaming replay, in file order, with the session it joins.
 * `turn.timestampMs` is already divided by the speedup ratio; `turn.index` is set by the consumer.
 */
export interface StreamedTurn {
  /** Session key: Bailian root `chat_id` as a string, Mooncake `session_id` or a generated id. */
  sessionId: string;
  turn: Turn;
  /** Sort key among the session's turns not yet sent (Bailian `turn`); ties keep file order. */
  order: number;
  contextMode: ContextMode;
  /** True when the format guarantees that no later row joins this session. */
  lastOfSession: boolean;
  /** The row's JSON value as read, when the stream was opened with {@link LoadOptions.keepRows}. */
  row?: unknown;
  /** Bailian tree replay: the tree's root session id, as {@link Conversation.treeId}; absent: `sessionId`. */
  treeId?: string;
  /** Bailian tree replay: on every row of a branch session, where it starts ({@link BranchStart}). */
  branch?: BranchStart;
}

/**
 * A trace read row by row while it is replayed, so a million-row file starts sending at once and
 * memory stays bounded. `turns` can be iterated once; iterating it throws the same
 * {@link DatasetError}s as a whole-file load, at the row where they occur.
 */
export interface TraceStream {
  file: string;
  /** KV-cache block size in tokens that `hashIds` refer to. */
  blockSize: number;
  turns: AsyncIterable<StreamedTurn>;
  /** Live drop counters, final once `turns` is exhausted. */
  skipped: SkipCounts;
}

/** A loader for one custom dataset type, chosen from the typed registry in `dataset/registry.ts`. */
export interface DatasetLoader {
  /** Name as given to `--custom-dataset-type`. */
  readonly name: string;
  /** Block size in tokens of this format's `hash_ids`. */
  readonly defaultBlockSize: number;
  /** Whether rows carry timestamps, so a fixed schedule applies. */
  readonly timestamped: boolean;
  /**
   * Reads and validates a file.
   * @throws {DatasetError} naming file, line and field for a malformed row, or an empty offset window.
   */
  load(file: string, options: LoadOptions): Promise<Dataset>;
  /**
   * Opens the file for a streaming replay (formats whose sessions can be formed row by row).
   * Rows must come in non-decreasing timestamp order for the replay to match a whole-file load.
   * Sessions are formed by the same rules as {@link DatasetLoader.load} (a Bailian row joins its
   * parent's session only when the parent is an earlier row, in both).
   * @throws {DatasetError} at once for bad options; file and row errors surface while iterating.
   */
  stream?(file: string, options: LoadOptions): TraceStream;
}

/**
 * A bad input file: message names the file, the 1-based line and the field. Whatever the message
 * quotes of the file is shown with its control characters escaped (util/printable.ts).
 */
export class DatasetError extends TokenloadError {
  override readonly name = 'DatasetError';
  constructor(
    message: string,
    readonly file: string,
    readonly line?: number,
    readonly field?: string,
  ) {
    super('E_DATASET', printable(message));
  }
}

/** The synthesis options of a trace load, as AIPerf names them (`--synthesis-…`). */
export interface TraceSynthesis {
  /** `--synthesis-prefix-len-multiplier` (> 0; default 1). */
  prefixLenMultiplier: number;
  /** `--synthesis-prefix-root-multiplier` (integer ≥ 1; default 1). */
  prefixRootMultiplier: number;
  /** `--synthesis-prompt-len-multiplier` (> 0; default 1). */
  promptLenMultiplier: number;
  /** `--synthesis-output-len-multiplier` (> 0; default 1). */
  outputLenMultiplier: number;
  /** `--synthesis-max-isl`: rows whose trace `input_length` exceeds it are dropped (integer ≥ 1). */
  maxIsl?: number | undefined;
  /** `--synthesis-max-osl`: `output_length` is capped at it after scaling (integer ≥ 1). */
  maxOsl?: number | undefined;
}
