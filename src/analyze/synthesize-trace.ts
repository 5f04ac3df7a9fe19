/**
 * `tokenload synthesize-trace`: rewrites a Bailian or Mooncake JSONL trace row by row with
 * timestamps divided by a speedup ratio, prompt and output lengths multiplied (block ids kept
 * consistent with `ceil(ISL / block size)`), rows over a max ISL dropped and output lengths capped
 * (AIPerf `--synthesis-*` semantics). Every row is validated by the format's loader first; the output
 * is in the same format and loads with the same `--custom-dataset-type`. Mooncake `delay` values are
 * left unchanged, as the loader leaves them. Ids are written back with every digit (a 64-bit
 * `hash_ids` or `chat_id` beyond 2^53 stays what it was; exact-ids.ts).
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { BAILIAN_BLOCK_SIZE, parseBailianRow } from '../dataset/bailian.js';
import { exactJson } from '../dataset/exact-ids.js';
import { readJsonl } from '../dataset/jsonl-reader.js';
import { MOONCAKE_BLOCK_SIZE } from '../dataset/mooncake.js';
import { parseMooncakeRow } from '../dataset/mooncake-row.js';
import type { SourceRef } from '../dataset/types.js';
import { TokenloadError } from '../errors.js';
import { BlockIdMapper } from './hash-scale.js';
import { type SynthesisParams, synthesizeRow } from './synthesize-row.js';

/** Options of {@link synthesizeTrace}; multipliers and the speedup default to 1. */
export interface SynthesisOptions {
  /** `bailian_trace` or `mooncake_trace`. */
  datasetType: string;
  speedupRatio?: number;
  promptLenMultiplier?: number;
  outputLenMultiplier?: number;
  maxIsl?: number;
  maxOsl?: number;
  /** Tokens per block; default: the format's (16 Bailian, 512 Mooncake). */
  blockSize?: number;
}

/** Counts of what {@link synthesizeTrace} did. */
export interface SynthesisResult {
  output: string;
  rowsIn: number;
  rowsOut: number;
  droppedOverMaxIsl: number;
  oslCapped: number;
  /** Rows without `input_length` (text, messages, payload) that the prompt multiplier could not scale. */
  promptUnscaled: number;
}

/** Invalid synthesis options (message names the option). */
export class SynthesisError extends TokenloadError {
  override readonly name = 'SynthesisError';
  constructor(message: string) {
    super('E_SYNTHESIS', message);
  }
}

interface Format {
  validate: (value: unknown, at: SourceRef, blockSize: number) => unknown;
  blockSize: number;
  timestampUnitMs: number;
}

/** Dataset types {@link synthesizeTrace} can rewrite. */
export const SYNTHESIS_DATASET_TYPES = ['bailian_trace', 'mooncake_trace'] as const;

const FORMATS: Record<(typeof SYNTHESIS_DATASET_TYPES)[number], Format> = {
  bailian_trace: { validate: parseBailianRow, blockSize: BAILIAN_BLOCK_SIZE, timestampUnitMs: 1000 },
  mooncake_trace: { validate: parseMooncakeRow, blockSize: MOONCAKE_BLOCK_SIZE, timestampUnitMs: 1 },
};

function formatOf(datasetType: string): Format | undefined {
  return Object.hasOwn(FORMATS, datasetType) ? FORMATS[datasetType as keyof typeof FORMATS] : undefined;
}

function positive(name: string, value: number | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const ok = Number.isFinite(value) && value > 0 && (!integer || Number.isSafeInteger(value));
  if (!ok)
    throw new SynthesisError(
      `${name}: expected ${integer ? 'a positive integer' : 'a number > 0'}, got ${value}`,
    );
  return value;
}

/**
 * Validates options into {@link SynthesisParams}.
 * @throws {SynthesisError} for an unknown dataset type or an option out of range.
 */
export function resolveSynthesis(options: SynthesisOptions): SynthesisParams {
  const format = formatOf(options.datasetType);
  if (format === undefined) {
    throw new SynthesisError(
      `unknown dataset type "${options.datasetType}"; valid types: ${Object.keys(FORMATS).join(', ')}`,
    );
  }
  return {
    speedupRatio: positive('speedupRatio', options.speedupRatio, false) ?? 1,
    promptLenMultiplier: positive('promptLenMultiplier', options.promptLenMultiplier, false) ?? 1,
    outputLenMultiplier: positive('outputLenMultiplier', options.outputLenMultiplier, false) ?? 1,
    maxIsl: positive('maxIsl', options.maxIsl, true),
    maxOsl: positive('maxOsl', options.maxOsl, true),
    blockSize: positive('blockSize', options.blockSize, true) ?? format.blockSize,
    timestampUnitMs: format.timestampUnitMs,
  };
}

async function writeLine(stream: WriteStream, text: string): Promise<void> {
  if (!stream.write(text)) await once(stream, 'drain');
}

async function closeStream(stream: WriteStream): Promise<void> {
  stream.end();
  await once(stream, 'finish');
}

/**
 * Reads `file`, rescales every row and writes the result to `output` (JSONL, one row per line),
 * through a temporary file beside it that is renamed to `output` only once every row is written.
 * @throws {SynthesisError} for bad options; {@link DatasetError} naming file:line:field for a malformed
 *   row (nothing is written to `output` then, and no temporary file is left); the file system error of a failed write.
 */
export async function synthesizeTrace(
  file: string,
  output: string,
  options: SynthesisOptions,
): Promise<SynthesisResult> {
  const params = resolveSynthesis(options);
  const format = formatOf(options.datasetType)!;
  const mapper = new BlockIdMapper();
  const result: SynthesisResult = {
    output,
    rowsIn: 0,
    rowsOut: 0,
    droppedOverMaxIsl: 0,
    oslCapped: 0,
    promptUnscaled: 0,
  };
  // Written beside `output` and renamed on success: a bad row or a failed write leaves no partial
  // trace, and an earlier file at `output` stays as it was.
  const temp = join(dirname(output), `.${basename(output)}.${process.pid}.tmp`);
  const stream = createWriteStream(temp);
  const failed = once(stream, 'error').then(([err]) => Promise.reject(err as Error));
  failed.catch(() => undefined);
  const work = async (): Promise<void> => {
    for await (const { line, value } of readJsonl(file)) {
      format.validate(value, { file, line }, params.blockSize);
      result.rowsIn += 1;
      const r = synthesizeRow(value as Record<string, unknown>, params, mapper);
      if (r.outcome === 'dropped-max-isl') {
        result.droppedOverMaxIsl += 1;
        continue;
      }
      if (r.oslCapped) result.oslCapped += 1;
      if (r.promptUnscaled) result.promptUnscaled += 1;
      result.rowsOut += 1;
      await writeLine(stream, `${exactJson(r.row)}\n`);
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
  return result;
}
