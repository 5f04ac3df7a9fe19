/**
 * `tokenload synthesize-trace`: rewrites a Bailian or Mooncake JSONL trace with AIPerf's trace
 * synthesis (`--synthesis-*`: timestamps divided by a speedup ratio, prefix blocks stretched, prompt
 * and output lengths multiplied, sessions spread over prefix-tree copies, rows over a max ISL
 * dropped, output lengths capped). The rows are read through the format's streamed loader, the one
 * `tokenload profile` replays from, so every row is checked as a replay checks it and gets exactly
 * the synthesis a replay with the same options gives it (dataset/trace-synthesis.ts): replaying the
 * output sends the same requests on the same schedule. The output is in the same format, each row
 * with its other fields and key order; Mooncake `delay` values are left unchanged, as the loader
 * leaves them. Ids are written back with every digit (a 64-bit `hash_ids` or `chat_id` beyond 2^53
 * stays what it was; exact-ids.ts). Memory stays bounded: rows are written as they are read.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { exactJson } from '../dataset/exact-ids.js';
import { getDatasetLoader } from '../dataset/registry.js';
import { SYNTHESIS_DATASET_TYPES, synthesisProblem } from '../dataset/trace-synthesis.js';
import type { StreamedTurn, TraceStream, TraceSynthesis } from '../dataset/types.js';
import { TokenloadError } from '../errors.js';

export { SYNTHESIS_DATASET_TYPES };

/** Options of {@link synthesizeTrace}; multipliers and the speedup default to 1 (AIPerf's defaults). */
export interface SynthesisOptions extends Partial<TraceSynthesis> {
  /** `bailian_trace` or `mooncake_trace`. */
  datasetType: string;
  speedupRatio?: number | undefined;
  /** Tokens per block; default: the format's (16 Bailian, 512 Mooncake). */
  blockSize?: number | undefined;
}

/** Counts of what {@link synthesizeTrace} did. */
export interface SynthesisResult {
  output: string;
  rowsIn: number;
  rowsOut: number;
  droppedOverMaxIsl: number;
  oslCapped: number;
  /** Rows without `input_length` (text, messages, payload) that the prompt multipliers could not scale. */
  promptUnscaled: number;
}

/** Invalid synthesis options (message names the option). */
export class SynthesisError extends TokenloadError {
  override readonly name = 'SynthesisError';
  constructor(message: string) {
    super('E_SYNTHESIS', message);
  }
}

/** Unit of each format's `timestamp`, in ms: Bailian seconds, Mooncake ms. */
const TIMESTAMP_UNIT_MS: Record<(typeof SYNTHESIS_DATASET_TYPES)[number], number> = {
  bailian_trace: 1000,
  mooncake_trace: 1,
};

function positive(name: string, value: number | undefined, integer: boolean): void {
  if (value === undefined) return;
  const ok = Number.isFinite(value) && value > 0 && (!integer || Number.isSafeInteger(value));
  if (!ok)
    throw new SynthesisError(
      `${name}: expected ${integer ? 'a positive integer' : 'a number > 0'}, got ${value}`,
    );
}

/**
 * Checks the options.
 * @returns the timestamp unit of the format, in ms.
 * @throws {SynthesisError} for an unknown dataset type or an option out of range.
 */
function checkOptions(options: SynthesisOptions): number {
  const { datasetType } = options;
  if (!(SYNTHESIS_DATASET_TYPES as readonly string[]).includes(datasetType)) {
    throw new SynthesisError(
      `unknown dataset type "${datasetType}"; valid types: ${SYNTHESIS_DATASET_TYPES.join(', ')}`,
    );
  }
  positive('speedupRatio', options.speedupRatio, false);
  positive('blockSize', options.blockSize, true);
  const problem = synthesisProblem(options);
  if (problem !== undefined) throw new SynthesisError(problem);
  return TIMESTAMP_UNIT_MS[datasetType as keyof typeof TIMESTAMP_UNIT_MS];
}

function openStream(file: string, options: SynthesisOptions): TraceStream {
  const { datasetType: _type, speedupRatio, blockSize, ...synthesis } = options;
  const loader = getDatasetLoader(options.datasetType);
  return loader.stream!(file, {
    ...(speedupRatio === undefined ? {} : { speedupRatio }),
    ...(blockSize === undefined ? {} : { blockSize }),
    synthesis,
    keepRows: true,
  });
}

/**
 * The row as written: the row read, with the fields the synthesis sets taken from its turn
 * (`timestamp` in the format's unit when a speedup applies, `input_length`, `hash_ids`,
 * `output_length`); every other field and the key order kept.
 */
function rewrittenRow(t: StreamedTurn, unitMs: number, speedup: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(t.row as Record<string, unknown>) };
  const { turn } = t;
  if (speedup && typeof out.timestamp === 'number' && turn.timestampMs !== undefined)
    out.timestamp = Math.round(turn.timestampMs * 1e6) / (unitMs * 1e6);
  if (turn.prompt.kind === 'synthetic') {
    out.input_length = turn.prompt.inputLength;
    if (Array.isArray(out.hash_ids)) out.hash_ids = turn.prompt.hashIds;
  }
  if (typeof out.output_length === 'number' && turn.maxTokens !== undefined)
    out.output_length = turn.maxTokens;
  return out;
}

async function writeLine(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

async function closeStream(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'finish');
}

/**
 * Reads `file`, applies the synthesis to every row and writes the result to `output` (JSONL, one
 * row per line), through a temporary file beside it that is renamed to `output` only once every
 * row is written.
 * @throws {SynthesisError} for bad options; {@link DatasetError} naming file:line:field for a malformed
 *   row, or when the max ISL leaves no row (nothing is written to `output` then, and no temporary
 *   file is left); the file system error of a failed write.
 */
export async function synthesizeTrace(
  file: string,
  output: string,
  options: SynthesisOptions,
): Promise<SynthesisResult> {
  const unitMs = checkOptions(options);
  const speedup = (options.speedupRatio ?? 1) !== 1;
  const trace = openStream(file, options);
  let rowsOut = 0;
  // Written beside `output` and renamed on success: a bad row or a failed write leaves no partial
  // trace, and an earlier file at `output` stays as it was.
  const temp = join(dirname(output), `.${basename(output)}.${process.pid}.tmp`);
  const stream = createWriteStream(temp);
  const failed = once(stream, 'error').then(([err]) => Promise.reject(err as Error));
  failed.catch(() => undefined);
  const work = async (): Promise<void> => {
    for await (const t of trace.turns) {
      rowsOut += 1;
      await writeLine(stream, `${exactJson(rewrittenRow(t, unitMs, speedup))}\n`);
    }
  };
  try {
    await Promise.race([work(), failed]);
    await Promise.race([closeStream(stream), failed]);
    await rename(temp, output);
  } catch (err) {
    stream.destroy();
    await rm(temp, { force: true });
    throw err;
  }
  const { overMaxIsl = 0, maxOslCapped = 0, promptUnscaled = 0 } = trace.skipped;
  return {
    output,
    rowsIn: rowsOut + overMaxIsl,
    rowsOut,
    droppedOverMaxIsl: overMaxIsl,
    oslCapped: maxOslCapped,
    promptUnscaled,
  };
}
