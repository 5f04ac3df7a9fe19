/**
 * `--slice-duration` at the end of a run: the profiling records are read back from
 * `profile_export.jsonl` once, grouped into time slices (metrics/timeslices.ts) and written as
 * `profile_export_aiperf_timeslices.json` and `.csv`.
 *
 * Why a read-back: a slice's bounds hang on the run's earliest request start, which is known only
 * once every record is in (records complete out of order, and a long request started first may
 * finish last), so records cannot be put in their slice as they complete without keeping them all
 * in memory. The file holds exactly the records the summary folded, with their metric values as
 * computed; reading it keeps only the slices' metric values, as the summary keeps the run's.
 */
import { writeTimesliceFiles } from '../export/index.js';
import type { SummarizeOptions } from '../metrics/summary.js';
import { type Timeslice, TimesliceBuilder } from '../metrics/timeslices.js';
import { readRecordsBack } from './records-readback.js';

/** What {@link writeTimeslices} needs. */
export interface TimesliceRunInput {
  /** The run's artifact folder, holding its `profile_export.jsonl`. */
  artifactDir: string;
  /** `--slice-duration`, s (> 0). */
  sliceSeconds: number;
  /** The run's earliest request start, monotonic ns of this process (`SummaryBuilder.firstStartNs`). */
  firstStartNs: number;
  /** Whether the run streamed (how the records are read back). */
  streaming: boolean;
  /** The options the run's summary was built with (goodput SLOs, the usage check's overhead). */
  summarize: SummarizeOptions;
  /** Resolved run configuration, for the JSON's `input_config`. */
  inputConfig: Record<string, unknown>;
}

/** The slices written and where. */
export interface TimesliceFiles {
  slices: Timeslice[];
  json: string;
  csv: string;
}

/**
 * Reads the run's records back, slices them and writes both time-slice files.
 * @throws {RecordLineError} for a records line the run did not write; the file system error of a failed read or write.
 */
export async function writeTimeslices(input: TimesliceRunInput): Promise<TimesliceFiles> {
  const builder = new TimesliceBuilder({
    sliceNs: Math.round(input.sliceSeconds * 1e9),
    originNs: 0,
    summarize: input.summarize,
  });
  const time = await readRecordsBack(input, (record) => builder.add(record));
  const slices = builder.build();
  const files = await writeTimesliceFiles(input.artifactDir, {
    slices,
    toEpochNs: (ns) => time.toEpochNs(ns),
    inputConfig: input.inputConfig,
  });
  return { slices, json: files.timeslices_json, csv: files.timeslices_csv };
}
