/**
 * `azure_trace` loader: the Azure LLM inference traces (Azure/AzurePublicDataset; 2023 = Splitwise,
 * 2024 = DynamoLLM, 2025 multimodal = ModServe). CSV with a header; the columns read, by name, are
 * `TIMESTAMP` (datetime), `ContextTokens` and `GeneratedTokens`; other columns (2025 `NumImages`) are
 * ignored. The traces carry no prompt content and no block hashes, so every row becomes its own
 * single-turn session with a fresh synthetic prompt of `ContextTokens` tokens and
 * `maxTokens = GeneratedTokens`.
 *
 * Time: each `TIMESTAMP` is converted to ms relative to the first valid row (see `trace-time.ts` for
 * the accepted datetime forms); the offset window and the speedup ratio then apply as for the JSONL
 * traces. A row earlier than the first one is malformed (the public files never decrease).
 */

import { intCell } from './csv-cells.js';
import { asCsvCells, csvRowReader } from './csv-reader.js';
import { resolveLoadOptions } from './load-options.js';
import { collectTraceRows, type RowParser, type TraceRow } from './trace-rows.js';
import { msBetween, parseTraceDatetime, type TraceInstant } from './trace-time.js';
import type { Conversation, Dataset, DatasetLoader, LoadOptions, SourceRef, Turn } from './types.js';
import { fieldError } from './validate.js';

/**
 * Block size reported for Azure datasets. Azure prompts carry no hash ids, so it only matters when a
 * user compares datasets; 512 is AIPerf's built-in default.
 */
export const AZURE_BLOCK_SIZE = 512;

/** Header names of the columns read, in the order of the cells the parser receives. */
export const AZURE_COLUMNS = ['TIMESTAMP', 'ContextTokens', 'GeneratedTokens'] as const;

/** Prefix of every Azure session id: `azure-<line>`. */
export const AZURE_SESSION_PREFIX = 'azure-';

function parseInstant(cell: string | undefined, at: SourceRef): TraceInstant {
  const instant = cell === undefined ? undefined : parseTraceDatetime(cell);
  if (instant === undefined) {
    throw fieldError(at, 'TIMESTAMP', 'a datetime like 2023-11-16 18:17:03.9799600 or …T…Z / +00:00', cell);
  }
  return instant;
}

/**
 * A row parser for one file. The first row it accepts becomes the time origin (0 ms), so a parser
 * must not be shared between files.
 * Field rules: `TIMESTAMP` a datetime not before the first row's; `ContextTokens` integer ≥ 1;
 * `GeneratedTokens` integer ≥ 1 (the public files have no zeros; a zero would ask the server for
 * nothing, which OpenAI-compatible servers reject).
 * @returns a parser throwing {@link DatasetError} naming file, line and column.
 */
export function createAzureRowParser(): RowParser<TraceRow> {
  let origin: TraceInstant | undefined;
  return (value, at, blockSize) => {
    const [timestamp, context, generated] = asCsvCells(value);
    const instant = parseInstant(timestamp, at);
    const inputLength = intCell(context, 'ContextTokens', 1, at);
    const maxTokens = intCell(generated, 'GeneratedTokens', 1, at);
    const timestampMs = msBetween(origin ?? instant, instant);
    if (timestampMs < 0) throw fieldError(at, 'TIMESTAMP', "a time not before the first row's", timestamp);
    origin ??= instant;
    const turn: Turn = {
      index: 0,
      timestampMs,
      prompt: { kind: 'synthetic', inputLength, hashIds: [], blockSize },
      maxTokens,
      source: at,
    };
    return { turn };
  };
}

function toConversations(rows: readonly TraceRow[]): Conversation[] {
  return rows.map(({ turn }) => ({
    id: `${AZURE_SESSION_PREFIX}${turn.source.line}`,
    turns: [turn],
    contextMode: 'message_array_with_responses',
  }));
}

/**
 * Loads an Azure LLM inference trace CSV.
 * @throws {DatasetError} for a missing column (field = its name), a malformed row (file:line and
 *   column), a Git LFS pointer, bad options, or an offset window that leaves no rows.
 */
export async function loadAzureTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, AZURE_BLOCK_SIZE);
  const read = csvRowReader({ required: AZURE_COLUMNS });
  const { rows, skipped } = await collectTraceRows(file, resolved, createAzureRowParser(), read);
  return {
    conversations: toConversations(rows),
    turnCount: rows.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/** The `azure_trace` dataset type (CSV, one request per session, timestamped). */
export const azureLoader: DatasetLoader = {
  name: 'azure_trace',
  defaultBlockSize: AZURE_BLOCK_SIZE,
  timestamped: true,
  load: loadAzureTrace,
};
