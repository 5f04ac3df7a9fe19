/**
 * The merged run's summary sections beside the metrics (`shards`, `load`, `tokenizer`, `responses`,
 * `tails_with_failures`, `start_up`, `servers`, `per_turn`, `input_rows_skipped`, `trace_check`) and its console report: what was merged first, then the table a single run
 * prints.
 */
import { join } from 'node:path';
import { EXIT_NO_SUCCESS } from '../errors.js';
import { EXPORTERS, INPUTS_FILE_NAME, RECORDS_FILE_NAME } from '../export/index.js';
import type { SummaryExportContext } from '../export/summary-json.js';
import { type PerTurnSection, perTurnLine } from '../metrics/per-turn.js';
import { serverLine } from '../metrics/servers.js';
import { startUpLine } from '../metrics/start-up.js';
import type { Summary } from '../metrics/summary.js';
import { loadLine } from '../report/lead.js';
import type { RecordFold } from './record-fold.js';
import type { IdentifiedShard, ShardSet } from './shard-set.js';
import { mergedLine, type ShardsSection, shardLine } from './shards-section.js';

/** The merged `load` section: the lowest-index shard's, its description prefixed with the shard count. */
function loadOf(set: ShardSet): { strategy: string; description: string } | null {
  const first = set.shards.find((s) => s.summary.load !== undefined) as IdentifiedShard | undefined;
  const load = first?.summary.load;
  if (first === undefined || load === undefined) return null;
  return {
    strategy: load.strategy,
    description: `${set.count} shards; shard ${first.shard.index}: ${load.description}`,
  };
}

/**
 * The sections every shard computes over the whole input file (the loader and the trace check run
 * before sharding): `input_rows_skipped` from the shard that read the most of the file (all of it,
 * or the latest `unread_after_line`: a streamed replay stopped early counts only what it read), and
 * `trace_check` from the first shard that has one, its `developer_role_rewritten` the most any shard
 * counted (a streamed replay counts the rows it read).
 */
function wholeFileSections(set: ShardSet): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const read = (s: IdentifiedShard) =>
    s.summary.input_rows_skipped?.unread_after_line ?? Number.POSITIVE_INFINITY;
  const skipped = set.shards
    .filter((s) => s.summary.input_rows_skipped !== undefined)
    .sort((a, b) => read(b) - read(a))[0];
  if (skipped !== undefined) out.input_rows_skipped = skipped.summary.input_rows_skipped;
  const checks = set.shards.flatMap((s) =>
    s.summary.trace_check === undefined ? [] : [s.summary.trace_check],
  );
  const first = checks[0];
  if (first === undefined) return out;
  const rewritten = checks
    .map((c) => c.developer_role_rewritten)
    .filter((n): n is number => typeof n === 'number');
  out.trace_check = {
    ...first,
    developer_role_rewritten: rewritten.length === 0 ? null : Math.max(...rewritten),
  };
  return out;
}

/** The summary's sections after the metrics, in a run's order, `shards` last. */
export function extraSections(
  set: ShardSet,
  fold: RecordFold,
  shards: ShardsSection,
  summary: Summary,
): Record<string, unknown> {
  const extra: Record<string, unknown> = {};
  const tokenizer = set.shards.find((s) => s.summary.tokenizer !== undefined)?.summary.tokenizer;
  if (tokenizer !== undefined) extra.tokenizer = tokenizer;
  const load = loadOf(set);
  if (load !== null) extra.load = load;
  const startUp = fold.startUpSection();
  if (startUp !== null) extra.start_up = startUp;
  const servers = fold.serversSection();
  if (servers !== null) extra.servers = servers;
  const perTurn = fold.perTurnSection();
  if (perTurn !== null) extra.per_turn = perTurn;
  Object.assign(extra, wholeFileSections(set));
  extra.responses = summary.responses;
  // Recomputed from the lines, as the metrics are (their `censored` flag included).
  if (summary.tails !== undefined && summary.tails !== null)
    extra.tails_with_failures = summary.tails.section;
  extra.shards = shards;
  return extra;
}

/** What the console report of a merge needs. */
export interface MergeConsoleInput extends SummaryExportContext {
  out: string;
  files: { summary_json: string; summary_csv: string };
  commandLine: string;
  recordCount: number;
  shards: ShardsSection;
}

function headerLines(input: MergeConsoleInput): string[] {
  const lines = [`CLI Command: ${input.commandLine}`, mergedLine(input.shards, input.recordCount)];
  for (const e of input.shards.per_shard) lines.push(shardLine(e));
  const load = input.extra?.load as { description: string } | undefined;
  if (load !== undefined) lines.push(loadLine(load.description));
  const startUp = input.extra?.start_up as Parameters<typeof startUpLine>[0] | undefined;
  if (startUp !== undefined) lines.push(startUpLine(startUp));
  const servers = input.extra?.servers as Parameters<typeof serverLine>[0][] | undefined;
  for (const s of servers ?? []) lines.push(serverLine(s));
  const perTurn = input.extra?.per_turn as PerTurnSection | undefined;
  const byTurn = perTurn === undefined ? null : perTurnLine(perTurn);
  if (byTurn !== null) lines.push(byTurn);
  const status = input.runStatus;
  // A partial or failed merge says so before anything else.
  if (status?.status === 'partial') lines.unshift(`Partial run: ${status.reason}`);
  else if (status?.exit_code === EXIT_NO_SUCCESS) lines.unshift(`Run failed: ${status.reason}`);
  return lines;
}

/** The console report of a merge (also its `profile_export_console.txt`). */
export function mergedConsole(input: MergeConsoleInput): string {
  const table = EXPORTERS.console.render({
    ...input,
    artifacts: {
      json: input.files.summary_json,
      csv: input.files.summary_csv,
      jsonl: join(input.out, RECORDS_FILE_NAME),
      inputs: join(input.out, INPUTS_FILE_NAME),
    },
  });
  return `${headerLines(input).join('\n')}\n${table}`;
}
