/**
 * Rescaling one trace row (pure): timestamps divided by the speedup, prompt and output lengths
 * multiplied, block ids kept consistent with the new prompt length, the AIPerf caps applied. The
 * row keeps every other field and its key order.
 */
import type { TraceId } from '../dataset/types.js';
import { type BlockIdMapper, scaleHashIds } from './hash-scale.js';

/** Synthesis parameters, already validated. */
export interface SynthesisParams {
  /** Timestamps are divided by this (> 0). */
  speedupRatio: number;
  /** `input_length` multiplier (> 0). */
  promptLenMultiplier: number;
  /** `output_length` multiplier (> 0). */
  outputLenMultiplier: number;
  /** Rows whose trace `input_length` exceeds this are dropped (AIPerf: checked before scaling). */
  maxIsl?: number | undefined;
  /** `output_length` is capped at this after scaling. */
  maxOsl?: number | undefined;
  blockSize: number;
  /** Unit of the format's `timestamp` in ms: 1000 for Bailian (seconds), 1 for Mooncake (ms). */
  timestampUnitMs: number;
}

/** What happened to a row. */
export type RowOutcome = 'kept' | 'dropped-max-isl';

/** Result of {@link synthesizeRow}. */
export interface RowResult {
  outcome: RowOutcome;
  row: Record<string, unknown>;
  /** The output length was capped by `maxOsl`. */
  oslCapped: boolean;
  /** The prompt multiplier could not apply (no `input_length`: text, messages or payload rows). */
  promptUnscaled: boolean;
}

/** Rounds to 9 decimals (ns for Bailian seconds), removing float noise from the division. */
function roundTime(value: number, unitMs: number): number {
  const perUnit = unitMs === 1000 ? 1e9 : 1e6;
  return Math.round(value * perUnit) / perUnit;
}

function scaleLength(value: number, multiplier: number, min: number): number {
  return multiplier === 1 ? value : Math.max(min, Math.round(value * multiplier));
}

function scalePrompt(out: Record<string, unknown>, p: SynthesisParams, mapper: BlockIdMapper): void {
  const isl = out.input_length as number;
  const newIsl = scaleLength(isl, p.promptLenMultiplier, 1);
  out.input_length = newIsl;
  if (Array.isArray(out.hash_ids)) {
    const hashIds = out.hash_ids as TraceId[];
    const input = { hashIds, inputLength: isl, newInputLength: newIsl, multiplier: p.promptLenMultiplier };
    out.hash_ids = scaleHashIds({ ...input, blockSize: p.blockSize }, mapper);
  }
}

function scaleOutput(out: Record<string, unknown>, p: SynthesisParams): boolean {
  if (typeof out.output_length !== 'number') return false;
  const osl = out.output_length;
  const scaled = scaleLength(osl, p.outputLenMultiplier, osl > 0 ? 1 : 0);
  const capped = p.maxOsl !== undefined && scaled > p.maxOsl;
  out.output_length = capped ? p.maxOsl : scaled;
  return capped;
}

/**
 * Rescales one validated row (a JSON object of the trace's format).
 * @param mapper shared across the file, so block ids stay consistent between rows.
 */
export function synthesizeRow(
  row: Record<string, unknown>,
  p: SynthesisParams,
  mapper: BlockIdMapper,
): RowResult {
  const hasIsl = typeof row.input_length === 'number';
  if (hasIsl && p.maxIsl !== undefined && (row.input_length as number) > p.maxIsl) {
    return { outcome: 'dropped-max-isl', row, oslCapped: false, promptUnscaled: false };
  }
  const out: Record<string, unknown> = { ...row };
  if (typeof out.timestamp === 'number' && p.speedupRatio !== 1) {
    out.timestamp = roundTime(out.timestamp / p.speedupRatio, p.timestampUnitMs);
  }
  if (hasIsl) scalePrompt(out, p, mapper);
  const oslCapped = scaleOutput(out, p);
  return { outcome: 'kept', row: out, oslCapped, promptUnscaled: !hasIsl && p.promptLenMultiplier !== 1 };
}
