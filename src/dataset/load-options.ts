/**
 * Checking and defaulting of {@link LoadOptions}, shared by every trace loader.
 */
import { isIdentitySynthesis, SYNTHESIS_DEFAULTS, synthesisProblem } from './trace-synthesis.js';
import type { TraceSynthesis } from './types.js';
import { DatasetError, type LoadOptions } from './types.js';

/** {@link LoadOptions} after validation, with defaults filled in. */
export interface ResolvedLoadOptions {
  /** Inclusive lower bound in trace ms before speedup; undefined for none. */
  startOffsetMs: number | undefined;
  /** Inclusive upper bound in trace ms before speedup; undefined for none. */
  endOffsetMs: number | undefined;
  /** Divisor applied to timestamps (> 0); default 1. */
  speedupRatio: number;
  /** Tokens per `hash_ids` block (positive integer). */
  blockSize: number;
  skipBadLines: boolean;
  /** Trace synthesis; undefined when none was asked for (every option at AIPerf's default). */
  synthesis: TraceSynthesis | undefined;
}

function optionError(file: string, option: string, expected: string, got: unknown): DatasetError {
  return new DatasetError(
    `${file}: option ${option}: expected ${expected}, got ${String(got)}`,
    file,
    undefined,
    option,
  );
}

function checkOffset(file: string, name: string, value: number | undefined): void {
  if (value === undefined) return;
  if (!Number.isFinite(value) || value < 0) throw optionError(file, name, 'a number of ms >= 0', value);
}

/**
 * Validates options and fills defaults (speedup 1, the loader's block size, no offsets).
 * @param defaultBlockSize the loader's block size, used when `options.blockSize` is undefined.
 * @throws {DatasetError} (field = option name) for a speedup ratio that is not > 0, a block size that
 *   is not a positive integer, a negative offset, an end offset before the start offset, or a
 *   synthesis option out of range (`synthesis.maxIsl`).
 */
export function resolveLoadOptions(
  file: string,
  options: LoadOptions,
  defaultBlockSize: number,
): ResolvedLoadOptions {
  const speedupRatio = options.speedupRatio ?? 1;
  if (!Number.isFinite(speedupRatio) || speedupRatio <= 0) {
    throw optionError(file, 'speedupRatio', 'a number > 0', speedupRatio);
  }
  const blockSize = options.blockSize ?? defaultBlockSize;
  if (!Number.isSafeInteger(blockSize) || blockSize < 1) {
    throw optionError(file, 'blockSize', 'a positive integer', blockSize);
  }
  checkOffset(file, 'startOffsetMs', options.startOffsetMs);
  checkOffset(file, 'endOffsetMs', options.endOffsetMs);
  const { startOffsetMs, endOffsetMs } = options;
  if (startOffsetMs !== undefined && endOffsetMs !== undefined && endOffsetMs < startOffsetMs) {
    throw optionError(file, 'endOffsetMs', `a value >= startOffsetMs (${startOffsetMs})`, endOffsetMs);
  }
  return {
    startOffsetMs,
    endOffsetMs,
    speedupRatio,
    blockSize,
    skipBadLines: options.skipBadLines ?? false,
    synthesis: resolveSynthesis(file, options.synthesis),
  };
}

function resolveSynthesis(file: string, given: LoadOptions['synthesis']): TraceSynthesis | undefined {
  if (given === undefined) return undefined;
  const problem = synthesisProblem(given);
  if (problem !== undefined) {
    const field = problem.slice(0, problem.indexOf(':'));
    throw new DatasetError(`${file}: option synthesis.${problem}`, file, undefined, `synthesis.${field}`);
  }
  const synthesis = { ...SYNTHESIS_DEFAULTS, ...given };
  return isIdentitySynthesis(synthesis) ? undefined : synthesis;
}
