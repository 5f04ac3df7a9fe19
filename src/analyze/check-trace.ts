/**
 * Runs the trace check (analyze/trace-check.ts) over a trace file, read row by row with the format's
 * streamed reader when it has one (Bailian, Mooncake: memory bounded whatever the file's length),
 * else loaded whole; or over a dataset already loaded.
 */
import { getDatasetLoader } from '../dataset/registry.js';
import type { Dataset, LoadOptions } from '../dataset/types.js';
import { TraceChecker, type TraceCheckOptions, type TraceCheckReport } from './trace-check.js';

/**
 * Checks the trace `file` of format `datasetType`, loaded with `load` (offsets, synthesis: the rows a
 * replay with them sends).
 * @throws {DatasetError} for a malformed trace; {@link Error} for an unknown dataset type.
 */
export async function checkTraceFile(
  file: string,
  datasetType: string,
  load: LoadOptions,
  options: TraceCheckOptions,
): Promise<TraceCheckReport> {
  const loader = getDatasetLoader(datasetType);
  const checker = new TraceChecker({ ...options, speedupRatio: load.speedupRatio });
  if (loader.stream === undefined)
    return checkDataset(await loader.load(file, load), options, load.speedupRatio);
  const stream = loader.stream(file, load);
  for await (const row of stream.turns) checker.add(row.sessionId, row.turn);
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
