/**
 * Runs the trace check (analyze/trace-check.ts) over a trace file, read row by row with the format's
 * streamed reader when it has one (Bailian, Mooncake: memory bounded whatever the file's length),
 * else loaded whole; or over a dataset already loaded.
 */
import { getDatasetLoader } from '../dataset/registry.js';
import { type Dataset, DatasetError, type LoadOptions } from '../dataset/types.js';
import { TraceChecker } from './trace-check.js';
import type { TraceCheckOptions, TraceCheckReport } from './trace-check-findings.js';

/**
 * Checks the trace `file` of format `datasetType`, loaded with `load` (offsets, synthesis: the rows a
 * replay with them sends). `tolerateBadRow` (a streamed replay, which meets a bad row only when it
 * reaches it, and stops there): a bad row ends the check, whose report covers the rows before it
 * and names the error in `readError`, instead of throwing.
 * @throws {DatasetError} for a malformed trace (a bad row without `tolerateBadRow`, or a file that
 *   cannot be opened); {@link Error} for an unknown dataset type.
 */
export async function checkTraceFile(
  file: string,
  datasetType: string,
  load: LoadOptions,
  options: TraceCheckOptions,
  tolerateBadRow = false,
): Promise<TraceCheckReport> {
  const loader = getDatasetLoader(datasetType);
  const checker = new TraceChecker({ ...options, speedupRatio: load.speedupRatio });
  if (loader.stream === undefined)
    return checkDataset(await loader.load(file, load), options, load.speedupRatio);
  const stream = loader.stream(file, load);
  try {
    for await (const row of stream.turns) checker.add(row.sessionId, row.turn);
  } catch (err) {
    if (!(tolerateBadRow && err instanceof DatasetError)) throw err;
    return { ...checker.report(stream.skipped), readError: err.message };
  }
  return checker.report(stream.skipped);
}

/** Checks a dataset already loaded; `speedupRatio` is the one its stamps were divided by (default 1). */
export function checkDataset(
  dataset: Dataset,
  options: TraceCheckOptions,
  speedupRatio?: number,
): TraceCheckReport {
  const checker = new TraceChecker({ ...options, speedupRatio });
  const turns = dataset.conversations.flatMap((c) => c.turns.map((turn) => ({ id: c.id, turn })));
  turns.sort((x, y) => x.turn.source.line - y.turn.source.line);
  for (const { id, turn } of turns) checker.add(id, turn);
  return checker.report(dataset.skipped);
}
