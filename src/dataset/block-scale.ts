/**
 * Rescaling one synthetic prompt (`input_length` + `hash_ids`) row by row, so that rows which shared
 * blocks before still share the scaled blocks after, byte for byte, with no table of ids: a new
 * block's id is a pure function of (original id, new position, prefix-tree copy).
 *
 * Layout of a row (AIPerf's prompt layouts, prompt/synthesizer.ts): `n` ids of `B` tokens, the last
 * one possibly partial (`s` tokens), or all `n` whole plus a fresh tail of `t` tokens no id names.
 * With the block factor `m`, whole block `j` becomes the whole new blocks at positions
 * `⌈j·m⌉ … ⌈(j+1)·m⌉ − 1` (so `n` whole blocks become `⌈n·m⌉`, AIPerf's count), each with id
 * {@link scaledBlockId}`(id_j, k, copy)`. A partial last block becomes `min(c·B, round(s·m))` tokens
 * (at least 1) on the `c` positions it maps to (none when `c` is 0, which a factor < 1 can give), and
 * the fresh tail becomes `round(t·tailFactor)` tokens. Blocks `0…p` equal in two rows map to equal
 * new blocks `0…⌈(p+1)·m⌉ − 1` (same ids, same sizes), so their text is the same; only the
 * positions past the shared part differ. With factor 1 and copy 0 the ids are kept as they are.
 */
import { fmix32 } from '../util/fmix32.js';
import type { TraceId } from './types.js';

/** How {@link scaleSyntheticPrompt} rescales a prompt. */
export interface BlockScale {
  /** Factor of the blocks `hash_ids` name (> 0). */
  blockFactor: number;
  /** Factor of the fresh tokens past the last id, and of a prompt without ids (> 0). */
  tailFactor: number;
  /** Prefix-tree copy (0 … root multiplier − 1); copy 0 keeps the ids when `blockFactor` is 1. */
  copy: number;
}

/** A synthetic prompt: exactly `inputLength` tokens over `hashIds` blocks of `blockSize` tokens. */
export interface BlockPrompt {
  inputLength: number;
  hashIds: readonly TraceId[];
  blockSize: number;
}

/** Tolerance of the block-count ceilings: `⌈10 × 1.1⌉` is 11, not the 12 that float noise gives. */
const CEIL_SLACK = 1e-9;

/** First new position of original block `j`: `⌈j·m⌉`. */
function firstPosition(j: number, m: number): number {
  return Math.ceil(j * m - CEIL_SLACK);
}

/** Scales a token count, never below 1; unchanged at factor 1. */
function scaleCount(tokens: number, factor: number): number {
  return factor === 1 ? tokens : Math.max(1, Math.round(tokens * factor));
}

/**
 * The id of a new block: a 53-bit mix of (original id, new position, copy), a safe integer, so
 * equal inputs give equal ids in any run, file or process and no table of ids is kept. Every bit
 * of a 64-bit original id counts. Two different inputs share an id with probability about
 * 2^-53 per pair; such a pair shares its text, which a prefix cache sees only when the blocks
 * before them are the same too.
 * @param position new block position (0-based, below 2^32).
 */
export function scaledBlockId(id: TraceId, position: number, copy: number): number {
  const big = typeof id === 'bigint';
  const lo = big ? Number(id & 0xffffffffn) : id >>> 0;
  const hi = big ? Number((id >> 32n) & 0xffffffffn) : Math.floor(id / 4294967296) >>> 0;
  const a = fmix32((lo ^ 0x9e3779b9) >>> 0);
  const b = fmix32((a ^ hi ^ 0x7f4a7c15) >>> 0);
  const c = fmix32((b ^ position ^ 0x85ebca6b) >>> 0);
  const d = fmix32((c ^ Math.imul(copy + 1, 0x27d4eb2f) ^ 0xc2b2ae35) >>> 0);
  const e = fmix32((d ^ lo ^ 0x165667b1) >>> 0);
  return (d & 0x1fffff) * 4294967296 + e;
}

/**
 * The rescaled prompt (see the module comment). The result is a valid layout: all blocks whole but
 * the last, or all whole plus a fresh tail.
 */
export function scaleSyntheticPrompt(
  prompt: BlockPrompt,
  scale: BlockScale,
): { inputLength: number; hashIds: TraceId[] } {
  const { inputLength: length, hashIds, blockSize } = prompt;
  const n = hashIds.length;
  if (n === 0) return { inputLength: scaleCount(length, scale.tailFactor), hashIds: [] };
  const m = scale.blockFactor;
  const keep = m === 1 && scale.copy === 0;
  const idAt = (j: number, k: number): TraceId =>
    keep ? (hashIds[j] as TraceId) : scaledBlockId(hashIds[j] as TraceId, k, scale.copy);
  const whole = length >= n * blockSize ? n : n - 1;
  const out: TraceId[] = [];
  for (let j = 0; j < whole; j += 1) {
    const end = firstPosition(j + 1, m);
    for (let k = firstPosition(j, m); k < end; k += 1) out.push(idAt(j, k));
  }
  let tokens = out.length * blockSize;
  if (whole < n) {
    const start = firstPosition(n - 1, m);
    const slots = firstPosition(n, m) - start;
    const partial = length - (n - 1) * blockSize;
    const size = slots === 0 ? 0 : Math.min(slots * blockSize, scaleCount(partial, m));
    for (let i = 0; i < Math.ceil(size / blockSize); i += 1) out.push(idAt(n - 1, start + i));
    tokens += size;
  }
  const tail = length - n * blockSize;
  if (tail > 0) tokens += scaleCount(tail, scale.tailFactor);
  return { inputLength: tokens, hashIds: out };
}
