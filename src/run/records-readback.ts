/**
 * Reading the profiling records back from `profile_export.jsonl` at the end of a run, for the parts
 * of the summary that need a record's window before they can use it (time slices, the steady-state
 * window): the window hangs on the run's first start and last end, known only once every record is
 * in, and the run keeps no records in memory. The file holds exactly the records the summary folded,
 * with their metric values as computed.
 */
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RECORDS_FILE_NAME } from '../export/index.js';
import { EpochBase, readRecordLine } from '../export/record-reader.js';
import type { LineRecord } from '../record/types.js';
import { TimeBase } from '../timing/clock.js';

/** Where the records are and how to read them. */
export interface ReadbackInput {
  /** The run's artifact folder, holding its `profile_export.jsonl`. */
  artifactDir: string;
  /** The run's earliest request start, monotonic ns of this process: 0 on the read-back clock. */
  firstStartNs: number;
  /** Whether the run streamed (how the records are read back). */
  streaming: boolean;
}

/**
 * Calls `onRecord` with every record of the file, in file order, its times on a clock whose 0 is
 * `firstStartNs` (monotonic time t reads back as t − firstStartNs); returns the epoch converter.
 * @throws {RecordLineError} for a records line the run did not write; the file system error of a failed read.
 */
export async function readRecordsBack(
  input: ReadbackInput,
  onRecord: (record: LineRecord) => void,
): Promise<EpochBase> {
  // The records' epoch ns go onto a base at the earliest start (the writer's own conversion of it).
  const time = new EpochBase(new TimeBase().toEpochNs(input.firstStartNs));
  const lines = createInterface({
    input: createReadStream(join(input.artifactDir, RECORDS_FILE_NAME)),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of lines) {
    if (line.trim() !== '') onRecord(readRecordLine(line, { time, streaming: input.streaming }));
  }
  return time;
}
