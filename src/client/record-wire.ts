/**
 * Compact transport of finished records from a worker thread to the main thread. Structured clone
 * copies an object property by property, so a record with hundreds of `{atNs, text, reasoning}`
 * chunks costs hundreds of object (de)serializations on both threads; the main thread, which also
 * runs the schedule, pays the larger half. Here the chunks of every record in a batch travel as
 * columns: one `Float64Array` of arrival stamps, the texts concatenated into one string with a
 * `Uint32Array` of lengths (likewise reasoning), and a `Float64Array` of running usage counts (NaN
 * where a chunk has none). Typed arrays and one string clone as plain copies; the record shells
 * (everything but `chunks`) go by structured clone as before. {@link unpackRecords} rebuilds records
 * equal to the originals (test/unit/record-wire.test.ts).
 */
import type { ContentChunk, RawRecord } from '../record/types.js';

/** A batch of records in column form (structured-clone friendly). */
export interface PackedRecords {
  /** The records with `chunks` emptied, in order. */
  shells: RawRecord[];
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

/**
 * Packs `records` for posting; their `chunks` arrays are replaced by empty ones (the caller gives the
 * records up).
 */
export function packRecords(records: RawRecord[]): PackedRecords {
  let total = 0;
  for (const raw of records) total += raw.chunks.length;
  const chunkCounts = new Uint32Array(records.length);
  const atNs = new Float64Array(total);
  const textLengths = new Uint32Array(total);
  const reasoningLengths = new Uint32Array(total);
  const usageTokens = new Float64Array(total);
  let text = '';
  let reasoning = '';
  let c = 0;
  for (let r = 0; r < records.length; r++) {
    const raw = records[r] as RawRecord;
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
    raw.chunks = [];
  }
  return {
    shells: records,
    chunkCounts,
    atNs,
    text,
    textLengths,
    reasoning,
    reasoningLengths,
    usageTokens,
  };
}

/** Rebuilds the records of a packed batch (after it crossed threads), chunks included. */
export function unpackRecords(packed: PackedRecords): RawRecord[] {
  const { shells, chunkCounts, atNs, text, textLengths, reasoning, reasoningLengths, usageTokens } = packed;
  let c = 0;
  let textAt = 0;
  let reasoningAt = 0;
  for (let r = 0; r < shells.length; r++) {
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
    (shells[r] as RawRecord).chunks = chunks;
  }
  return shells;
}
