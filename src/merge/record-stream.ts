/**
 * The shards' `profile_export.jsonl` files read as one stream of records, line by line (one line per
 * file in memory at a time): each file's lines in their own order (the order its run appended them,
 * as requests completed), the files interleaved by `request_end_ns` (ties: the earlier file), the
 * order one process would have appended them in. Blank lines are skipped.
 */
import { createReadStream } from 'node:fs';
import { createInterface, type Interface } from 'node:readline';
import { type EpochBase, RecordLineError, readRecordLine } from '../export/record-reader.js';
import type { LineRecord } from '../record/types.js';
import { RunLoadError } from '../report/types.js';

/** One records file to read. */
export interface RecordSource {
  file: string;
  /** Its run's `input_config.streaming` (see `readRecordLine`). */
  streaming: boolean;
}

/** One line of the merged stream: its text (no newline), its record and which source it came from. */
export interface MergedLine {
  source: number;
  text: string;
  record: LineRecord;
}

class SourceReader {
  private readonly lines: Interface;
  private readonly iterator: AsyncIterator<string>;
  private lineNo = 0;
  /** The next line not yet taken; null once the file is read. */
  head: MergedLine | null = null;

  constructor(
    private readonly source: RecordSource,
    private readonly index: number,
    private readonly time: EpochBase,
  ) {
    const input = createReadStream(source.file);
    this.lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    this.iterator = this.lines[Symbol.asyncIterator]();
  }

  /** Reads the next record line into {@link head}. @throws {RunLoadError} naming file, line and field. */
  async advance(): Promise<void> {
    for (;;) {
      const next = await this.iterator.next();
      if (next.done === true) {
        this.head = null;
        return;
      }
      this.lineNo++;
      const text = next.value;
      if (text.trim() === '') continue;
      this.head = { source: this.index, text, record: this.parse(text) };
      return;
    }
  }

  private parse(text: string): LineRecord {
    try {
      return readRecordLine(text, { time: this.time, streaming: this.source.streaming });
    } catch (err) {
      if (!(err instanceof RecordLineError)) throw err;
      throw new RunLoadError(`${this.source.file}:${this.lineNo}: ${err.message}`, this.source.file);
    }
  }

  close(): void {
    this.lines.close();
  }
}

/** The reader whose head ends first (ties: the lower index); undefined when all are read. */
function earliest(readers: readonly SourceReader[]): SourceReader | undefined {
  let best: SourceReader | undefined;
  for (const r of readers) {
    if (r.head === null) continue;
    if (best === undefined || r.head.record.raw.endNs < (best.head as MergedLine).record.raw.endNs) best = r;
  }
  return best;
}

/**
 * Every record line of `sources`, merged as the module says; times on `time`'s base.
 * @throws {RunLoadError} for a line that is not a record line (`file:line: field …: …`) or a file
 *   that cannot be read.
 */
export async function* mergeRecordFiles(
  sources: readonly RecordSource[],
  time: EpochBase,
): AsyncGenerator<MergedLine> {
  const readers = sources.map((s, i) => new SourceReader(s, i, time));
  try {
    for (const r of readers) await r.advance();
    for (let r = earliest(readers); r !== undefined; r = earliest(readers)) {
      yield r.head as MergedLine;
      await r.advance();
    }
  } finally {
    for (const r of readers) r.close();
  }
}
