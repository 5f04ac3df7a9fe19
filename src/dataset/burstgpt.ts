/**
 * `burst_gpt_trace` loader: BurstGPT (HPMLL/BurstGPT) Azure OpenAI GPT traffic, CSV with a header.
 * Columns are read by name (release `_3` inserts `Session ID` and `Elapsed time`): `Timestamp`
 * (seconds since 0:00 of the trace's first day), `Request tokens`, `Response tokens`, and the optional
 * `Model` and `Log Type` (kept together as the turn's `requestType`, e.g. `ChatGPT / Conversation
 * log`). Each row is its own single-turn session with a fresh synthetic prompt (AIPerf
 * `burst_gpt_trace`). Timestamps keep the trace's own origin (seconds × 1000), like Bailian.
 *
 * Rows that do not describe a usable request:
 * - `Request tokens` = 0 (reported for several percent of rows, mostly with 0 response tokens as
 *   well): there is no prompt to send, so the row is dropped and counted in `skipped.invalidRows`.
 * - `Response tokens` = 0 with a non-zero request: a request that failed in the original service. Its
 *   arrival and prompt were real load, so the row is KEPT, with `maxTokens` =
 *   {@link BURSTGPT_FAILED_MAX_TOKENS} (1): the trace does not say how far the request got, and 0 is
 *   rejected by OpenAI-compatible servers (vLLM: "max_tokens must be at least 1"), which would turn
 *   every such row into an error record.
 */

import { intCell, nonNegativeCell, optionalTextCell } from './csv-cells.js';
import { asCsvCells, csvRowReader } from './csv-reader.js';
import { resolveLoadOptions } from './load-options.js';
import { collectTraceRows, type TraceRow } from './trace-rows.js';
import {
  type Conversation,
  type Dataset,
  DatasetError,
  type DatasetLoader,
  type LoadOptions,
  type SourceRef,
  type Turn,
} from './types.js';

/** Block size reported for BurstGPT datasets (no hash ids; AIPerf's built-in default). */
export const BURSTGPT_BLOCK_SIZE = 512;

/** `maxTokens` given to a row whose `Response tokens` is 0 (a failed request in the trace). */
export const BURSTGPT_FAILED_MAX_TOKENS = 1;

/** Required header names, in the order of the first cells the parser receives. */
export const BURSTGPT_COLUMNS = ['Timestamp', 'Request tokens', 'Response tokens'] as const;

/** Optional header names, after the required ones. */
export const BURSTGPT_OPTIONAL_COLUMNS = ['Model', 'Log Type'] as const;

/** Prefix of every BurstGPT session id: `burstgpt-<line>`. */
export const BURSTGPT_SESSION_PREFIX = 'burstgpt-';

/** One validated BurstGPT row; `invalid` rows (0 request tokens) are dropped after window filtering. */
export interface BurstGptRow extends TraceRow {
  invalid: boolean;
  /** `Response tokens` was 0 (sent asking for {@link BURSTGPT_FAILED_MAX_TOKENS}). */
  zeroOutput: boolean;
}

function secondsToMs(seconds: number): number {
  return Math.round(seconds * 1e9) / 1e6;
}

function requestTypeOf(model: string | undefined, logType: string | undefined): string | undefined {
  const parts = [model, logType].filter((p): p is string => p !== undefined);
  return parts.length === 0 ? undefined : parts.join(' / ');
}

/**
 * Validates one BurstGPT row (cells in {@link BURSTGPT_COLUMNS} then {@link BURSTGPT_OPTIONAL_COLUMNS}
 * order) and builds its turn (`timestampMs` in trace ms before speedup).
 * Field rules: `Timestamp` a number of seconds ≥ 0; `Request tokens` and `Response tokens` integers
 * ≥ 0; `Model`, `Log Type` free text.
 * @throws {DatasetError} naming file, line and column.
 */
export function parseBurstGptRow(value: unknown, at: SourceRef, blockSize: number): BurstGptRow {
  const [timestamp, request, response, model, logType] = asCsvCells(value);
  const timestampMs = secondsToMs(nonNegativeCell(timestamp, 'Timestamp', at));
  const inputLength = intCell(request, 'Request tokens', 0, at);
  const outputLength = intCell(response, 'Response tokens', 0, at);
  const requestType = requestTypeOf(optionalTextCell(model), optionalTextCell(logType));
  const turn: Turn = {
    index: 0,
    timestampMs,
    prompt: { kind: 'synthetic', inputLength, hashIds: [], blockSize },
    maxTokens: outputLength === 0 ? BURSTGPT_FAILED_MAX_TOKENS : outputLength,
    ...(requestType === undefined ? {} : { requestType }),
    source: at,
  };
  return { turn, invalid: inputLength === 0, zeroOutput: outputLength === 0 };
}

function toConversation(turn: Turn): Conversation {
  return {
    id: `${BURSTGPT_SESSION_PREFIX}${turn.source.line}`,
    turns: [turn],
    contextMode: 'message_array_with_responses',
  };
}

/**
 * Loads a BurstGPT CSV.
 * @throws {DatasetError} for a missing required column (field = its name), a malformed row (file:line
 *   and column), a Git LFS pointer, bad options, an offset window that leaves no rows, or a file whose
 *   rows all have 0 request tokens.
 */
export async function loadBurstGptTrace(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, BURSTGPT_BLOCK_SIZE);
  const read = csvRowReader({ required: BURSTGPT_COLUMNS, optional: BURSTGPT_OPTIONAL_COLUMNS });
  const collected = await collectTraceRows(file, resolved, parseBurstGptRow, read);
  const kept = collected.rows.filter((row) => !row.invalid);
  const skipped = {
    ...collected.skipped,
    invalidRows: collected.rows.length - kept.length,
    zeroOutputRows: kept.filter((row) => row.zeroOutput).length,
  };
  if (kept.length === 0) {
    throw new DatasetError(
      `${file}: the trace has no usable rows (${skipped.invalidRows} rows with 0 "Request tokens" skipped)`,
      file,
    );
  }
  return {
    conversations: kept.map((row) => toConversation(row.turn)),
    turnCount: kept.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/** The `burst_gpt_trace` dataset type (CSV, one request per session, timestamped). */
export const burstGptLoader: DatasetLoader = {
  name: 'burst_gpt_trace',
  defaultBlockSize: BURSTGPT_BLOCK_SIZE,
  timestamped: true,
  load: loadBurstGptTrace,
};
