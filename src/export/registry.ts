/**
 * The exporter registry. Summary exporters are pure functions from a summary context to file text;
 * stream writers append as the run goes. CLI choices come from these maps' keys.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ConsoleContext, renderConsole } from './console-table.js';
import { INPUTS_FILE_NAME, InputsWriter } from './inputs-json.js';
import { RECORDS_FILE_NAME, RecordWriter } from './jsonl-writer.js';
import { renderSummaryCsv, SUMMARY_CSV_FILE_NAME } from './summary-csv.js';
import { renderSummaryJson, SUMMARY_JSON_FILE_NAME, type SummaryExportContext } from './summary-json.js';
import { renderTimeslicesCsv, TIMESLICES_CSV_FILE_NAME } from './timeslices-csv.js';
import {
  renderTimeslicesJson,
  TIMESLICES_JSON_FILE_NAME,
  type TimesliceExportContext,
} from './timeslices-json.js';

/** Summary exporters: file name and renderer. */
export const EXPORTERS = {
  summary_json: { fileName: SUMMARY_JSON_FILE_NAME, render: renderSummaryJson },
  summary_csv: {
    fileName: SUMMARY_CSV_FILE_NAME,
    render: (ctx: SummaryExportContext): string => renderSummaryCsv(ctx.summary),
  },
  console: {
    fileName: 'profile_export_console.txt',
    render: (ctx: SummaryExportContext & Omit<ConsoleContext, 'summary'>): string => renderConsole(ctx),
  },
} as const;

/** Time-slice exporters (`--slice-duration`): file name and renderer. */
export const TIMESLICE_EXPORTERS = {
  timeslices_json: { fileName: TIMESLICES_JSON_FILE_NAME, render: renderTimeslicesJson },
  timeslices_csv: { fileName: TIMESLICES_CSV_FILE_NAME, render: renderTimeslicesCsv },
} as const;

/** Streaming writers: file name and a constructor taking the full path. */
export const STREAM_WRITERS = {
  records_jsonl: { fileName: RECORDS_FILE_NAME, Writer: RecordWriter },
  inputs_json: { fileName: INPUTS_FILE_NAME, Writer: InputsWriter },
} as const;

/** A summary exporter name. */
export type ExporterName = keyof typeof EXPORTERS;

/**
 * Writes the summary JSON and CSV into `dir`; returns their paths keyed by exporter name.
 * @throws the file system error of a failed write.
 */
export async function writeSummaryFiles(
  dir: string,
  ctx: SummaryExportContext,
): Promise<{ summary_json: string; summary_csv: string }> {
  const json = join(dir, EXPORTERS.summary_json.fileName);
  const csv = join(dir, EXPORTERS.summary_csv.fileName);
  await writeFile(json, EXPORTERS.summary_json.render(ctx));
  await writeFile(csv, EXPORTERS.summary_csv.render(ctx));
  return { summary_json: json, summary_csv: csv };
}

/**
 * Writes the time-slice JSON and CSV into `dir`; returns their paths keyed by exporter name.
 * @throws the file system error of a failed write.
 */
export async function writeTimesliceFiles(
  dir: string,
  ctx: TimesliceExportContext,
): Promise<{ timeslices_json: string; timeslices_csv: string }> {
  const json = join(dir, TIMESLICE_EXPORTERS.timeslices_json.fileName);
  const csv = join(dir, TIMESLICE_EXPORTERS.timeslices_csv.fileName);
  await writeFile(json, TIMESLICE_EXPORTERS.timeslices_json.render(ctx));
  await writeFile(csv, TIMESLICE_EXPORTERS.timeslices_csv.render(ctx));
  return { timeslices_json: json, timeslices_csv: csv };
}
