/**
 * Which hash ids of a trace are shared, counted over rows: the rows of a whole-file load, or a
 * streamed pre-pass over the file with the replay's own filters (the table is dataset/shared-ids.ts).
 */
import type { ResolvedLoadOptions } from './load-options.js';
import { SharedIds } from './shared-ids.js';
import { emptySkipCounts, type RowParser, streamTraceRows, type TraceRow } from './trace-rows.js';

/** Counts the ids of one row's synthetic prompt (rows of other prompt kinds have none). */
export function countRowIds(shared: SharedIds, row: TraceRow): void {
  const prompt = row.turn.prompt;
  if (prompt.kind !== 'synthetic') return;
  for (const id of prompt.hashIds) shared.add(id);
}

/** The {@link SharedIds} of rows already read (a whole-file load). */
export function sharedIdsOfRows(rows: Iterable<TraceRow>): SharedIds {
  const shared = new SharedIds();
  for (const row of rows) countRowIds(shared, row);
  return shared;
}

/**
 * The pre-pass of a streamed synthesis: reads `file` once, streaming, with the filters of the replay
 * (offset window, max ISL, bad lines as `options` say), and counts the kept rows' ids. Rows are not
 * kept. The replay's own read counts what it drops; this read's counts are discarded.
 * @throws {DatasetError} as {@link streamTraceRows}.
 */
export async function scanSharedIds<R extends TraceRow>(
  file: string,
  options: ResolvedLoadOptions,
  parse: RowParser<R>,
): Promise<SharedIds> {
  const shared = new SharedIds();
  const rows = streamTraceRows(file, options, parse, emptySkipCounts(), undefined, {
    stopAtEndOffset: true,
    maxIsl: true,
  });
  for await (const row of rows) countRowIds(shared, row);
  return shared;
}
