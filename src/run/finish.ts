/**
 * End of a run: summarize the records and write the summary artifacts and the console copy.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EXPORTERS, INPUTS_FILE_NAME, RECORDS_FILE_NAME, writeSummaryFiles } from '../export/index.js';
import { parseGoodput } from '../metrics/goodput.js';
import { type Summary, summarize } from '../metrics/summary.js';
import type { ProcessedRecord } from '../record/types.js';
import type { LoadStrategy } from '../timing/types.js';
import type { ProfileConfig } from './config.js';

/** What a finished run returns to the CLI. */
export interface RunOutcome {
  summary: Summary;
  /** The console report (also saved as `profile_export_console.txt`). */
  consoleText: string;
  artifactDir: string;
  wasCancelled: boolean;
  recordCount: number;
}

/** Inputs of {@link finishRun}. */
export interface FinishInput {
  config: ProfileConfig;
  records: readonly ProcessedRecord[];
  startTime: Date;
  endTime: Date;
  wasCancelled: boolean;
  strategy: LoadStrategy;
  extraWarnings: string[];
}

/**
 * Summarizes and writes `profile_export_aiperf.json`, `profile_export_aiperf.csv` and
 * `profile_export_console.txt` into the artifact directory.
 * @throws the file system error of a failed write.
 */
export async function finishRun(input: FinishInput): Promise<RunOutcome> {
  const { config } = input;
  const slos = config.goodput === undefined ? undefined : parseGoodput(config.goodput);
  const summary = summarize(input.records, slos === undefined ? {} : { slos });
  summary.warnings.push(...input.extraWarnings);
  const ctx = {
    summary,
    inputConfig: { ...config } as Record<string, unknown>,
    startTime: input.startTime,
    endTime: input.endTime,
    wasCancelled: input.wasCancelled,
  };
  const files = await writeSummaryFiles(config.artifactDir, ctx);
  const consoleText = EXPORTERS.console.render({
    ...ctx,
    artifacts: {
      json: files.summary_json,
      csv: files.summary_csv,
      jsonl: join(config.artifactDir, RECORDS_FILE_NAME),
      inputs: join(config.artifactDir, INPUTS_FILE_NAME),
    },
  });
  const header = `CLI Command: ${config.commandLine}\nLoad: ${input.strategy.describe()}${input.wasCancelled ? '\nInterrupted: summary covers the requests measured before the stop' : ''}\n`;
  const text = `${header}${consoleText}`;
  await writeFile(join(config.artifactDir, EXPORTERS.console.fileName), text);
  return {
    summary,
    consoleText: text,
    artifactDir: config.artifactDir,
    wasCancelled: input.wasCancelled,
    recordCount: input.records.length,
  };
}
