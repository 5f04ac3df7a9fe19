/**
 * Compact transport of finished records from a worker thread to the main thread. Structured clone
 * copies an object property by property, so a record with hundreds of `{atNs, text, reasoning}`
 * chunks costs hundreds of object (de)serializations on both threads. Here a batch travels as
 * columns:
 * - only what the worker observed: the identity fields (conversation, ids, model, schedule, token
 *   counts requested) are not sent back, the main thread rebuilds them from the request it kept;
 * - per record, stamps and counts in one `Float64Array` (NaN for null), finish reason, usage and
 *   error in three small arrays (usually null);
 * - per chunk, one `Float64Array` of arrival stamps, the texts concatenated into one string with a
 *   `Uint32Array` of lengths (likewise reasoning), and a `Float64Array` of running usage counts (NaN
 *   where a chunk has none);
 * - per record, the server's own timing and the reply's tool calls (usually absent, null here).
 * Typed arrays and strings clone as plain copies. {@link unpackRecords} rebuilds records equal to
 * the originals (test/unit/record-wire.test.ts).
 */
import type { ServerTiming } from '../record/server-timing.js';
import type { ContentChunk, IdleClose, RawRecord, RecordError, ToolReply, Usage } from '../record/types.js';

/** Numbers per record in {@link PackedRecords.numbers}. */
const FIELDS = 15;

/** A batch of records in column form (structured-clone friendly). */
export interface PackedRecords {
  /**
   * Per record: startNs, ackNs, streamEndNs, endNs, httpStatus, parseErrors, cancelled (1/0), sentNs,
   * connectionReused (1/0), connectDurationNs, responseStreamed (1/0), then `idleClose`'s idleNs,
   * byServer (1/0) and keepAliveS; NaN = null (all three NaN without an `idleClose`); then
   * `cumulativeText` (1/0).
   */
  numbers: Float64Array;
  finishReasons: (string | null)[];
  usages: (Usage | null)[];
  errors: (RecordError | null)[];
  /** Each record's `serverTiming`, null where absent. */
  serverTimings: (ServerTiming | null)[];
  /** Each record's `toolReply`, null where absent. */
  toolReplies: (ToolReply | null)[];
  /** Chunk count of each record. */
  chunkCounts: Uint32Array;
  /** `atNs` of every chunk of every record, in order. */
  atNs: Float64Array;
  /** Every chunk's `text`, concatenated, and each one's length (UTF-16 code units). */
  text: string;
  textLengths: Uint32Array;
  /** Every chunk's `reasoning`, concatenated, and each one's length. */
  reasoning: string;
  reasoningLengths: Uint32Array;
  /** Every chunk's `usageCompletionTokens`, NaN where absent. */
  usageTokens: Float64Array;
}

const orNaN = (value: number | null): number => (value === null ? Number.NaN : value);
const orNull = (value: number): number | null => (Number.isNaN(value) ? null : value);
const flag = (value: boolean | null): number => (value === null ? Number.NaN : value ? 1 : 0);
const unflag = (value: number): boolean | null => (Number.isNaN(value) ? null : value === 1);

/** Writes `raw`'s {@link FIELDS} numbers from `at` (see {@link PackedRecords.numbers}). */
function packNumbers(numbers: Float64Array, at: number, raw: RawRecord): void {
  numbers[at] = raw.startNs;
  numbers[at + 1] = orNaN(raw.ackNs);
  numbers[at + 2] = orNaN(raw.streamEndNs);
  numbers[at + 3] = raw.endNs;
  numbers[at + 4] = orNaN(raw.httpStatus);
  numbers[at + 5] = raw.parseErrors;
  numbers[at + 6] = raw.cancelled ? 1 : 0;
  numbers[at + 7] = orNaN(raw.sentNs);
  numbers[at + 8] = flag(raw.connectionReused);
  numbers[at + 9] = orNaN(raw.connectDurationNs);
  numbers[at + 10] = flag(raw.responseStreamed);
  packIdleClose(numbers, at + 11, raw.idleClose);
  numbers[at + 14] = raw.cumulativeText === true ? 1 : 0;
}

/** Packs what the worker observed of `records` (identity fields are left out). */
export function packRecords(records: readonly RawRecord[]): PackedRecords {
  let total = 0;
  for (const raw of records) total += raw.chunks.length;
  const numbers = new Float64Array(records.length * FIELDS);
  const chunkCounts = new Uint32Array(records.length);
  const atNs = new Float64Array(total);
  const textLengths = new Uint32Array(total);
  const reasoningLengths = new Uint32Array(total);
  const usageTokens = new Float64Array(total);
  const finishReasons: (string | null)[] = [];
  const usages: (Usage | null)[] = [];
  const errors: (RecordError | null)[] = [];
  const serverTimings: (ServerTiming | null)[] = [];
  const toolReplies: (ToolReply | null)[] = [];
  let text = '';
  let reasoning = '';
  let c = 0;
  for (let r = 0; r < records.length; r++) {
    const raw = records[r] as RawRecord;
    packNumbers(numbers, r * FIELDS, raw);
    finishReasons.push(raw.finishReason);
    usages.push(raw.usage);
    errors.push(raw.error);
    serverTimings.push(raw.serverTiming ?? null);
    toolReplies.push(raw.toolReply ?? null);
    const chunks = raw.chunks;
    chunkCounts[r] = chunks.length;
    for (let k = 0; k < chunks.length; k++, c++) {
      const chunk = chunks[k] as ContentChunk;
      atNs[c] = chunk.atNs;
      text += chunk.text;
      textLengths[c] = chunk.text.length;
      reasoning += chunk.reasoning;
      reasoningLengths[c] = chunk.reasoning.length;
      usageTokens[c] = chunk.usageCompletionTokens ?? Number.NaN;
    }
  }
  return {
    numbers,
    finishReasons,
    usages,
    errors,
    serverTimings,
    toolReplies,
    chunkCounts,
    atNs,
    text,
    textLengths,
    reasoning,
    reasoningLengths,
    usageTokens,
  };
}

/**
 * Completes `shells` (records built on this side from each request's identity, nothing observed
 * yet) with a packed batch that crossed threads, in order; returns them.
 */
export function unpackRecords(packed: PackedRecords, shells: RawRecord[]): RawRecord[] {
  const { numbers, chunkCounts, atNs, text, textLengths, reasoning, reasoningLengths, usageTokens } = packed;
  let c = 0;
  let textAt = 0;
  let reasoningAt = 0;
  for (let r = 0; r < shells.length; r++) {
    const raw = shells[r] as RawRecord;
    const at = r * FIELDS;
    raw.startNs = numbers[at] as number;
    raw.ackNs = orNull(numbers[at + 1] as number);
    raw.streamEndNs = orNull(numbers[at + 2] as number);
    raw.endNs = numbers[at + 3] as number;
    raw.httpStatus = orNull(numbers[at + 4] as number);
    raw.parseErrors = numbers[at + 5] as number;
    raw.cancelled = numbers[at + 6] === 1;
    raw.sentNs = orNull(numbers[at + 7] as number);
    raw.connectionReused = unflag(numbers[at + 8] as number);
    raw.connectDurationNs = orNull(numbers[at + 9] as number);
    raw.responseStreamed = unflag(numbers[at + 10] as number);
    const idleClose = unpackIdleClose(numbers, at + 11);
    if (idleClose !== undefined) raw.idleClose = idleClose;
    if (numbers[at + 14] === 1) raw.cumulativeText = true;
    raw.finishReason = packed.finishReasons[r] ?? null;
    raw.usage = packed.usages[r] ?? null;
    raw.error = packed.errors[r] ?? null;
    const serverTiming = packed.serverTimings[r];
    if (serverTiming != null) raw.serverTiming = serverTiming;
    const toolReply = packed.toolReplies[r];
    if (toolReply != null) raw.toolReply = toolReply;
    const count = chunkCounts[r] as number;
    const chunks: ContentChunk[] = [];
    for (let k = 0; k < count; k++, c++) {
      const textLength = textLengths[c] as number;
      const reasoningLength = reasoningLengths[c] as number;
      const chunk: ContentChunk = {
        atNs: atNs[c] as number,
        text: textLength === 0 ? '' : text.slice(textAt, textAt + textLength),
        reasoning: reasoningLength === 0 ? '' : reasoning.slice(reasoningAt, reasoningAt + reasoningLength),
      };
      textAt += textLength;
      reasoningAt += reasoningLength;
      const usage = usageTokens[c] as number;
      if (!Number.isNaN(usage)) chunk.usageCompletionTokens = usage;
      chunks.push(chunk);
    }
    raw.chunks = chunks;
  }
  return shells;
}

/** Writes `idleClose` into three slots from `at` (all NaN when absent). */
function packIdleClose(numbers: Float64Array, at: number, idleClose: IdleClose | undefined): void {
  numbers[at] = idleClose === undefined ? Number.NaN : idleClose.idleNs;
  numbers[at + 1] = flag(idleClose === undefined ? null : idleClose.byServer);
  numbers[at + 2] = idleClose === undefined ? Number.NaN : orNaN(idleClose.keepAliveS);
}

/** Reads what {@link packIdleClose} wrote; undefined when absent. */
function unpackIdleClose(numbers: Float64Array, at: number): IdleClose | undefined {
  const idleNs = numbers[at] as number;
  if (Number.isNaN(idleNs)) return undefined;
  return { idleNs, byServer: numbers[at + 1] === 1, keepAliveS: orNull(numbers[at + 2] as number) };
}
