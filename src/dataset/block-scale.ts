/**
 * Rescaling one synthetic prompt (`input_length` + `hash_ids`) by AIPerf's synthesis rule
 * (`src/aiperf/dataset/synthesis/synthesizer.py`, `_apply_multipliers`), given the trace's shared ids
 * (dataset/shared-ids.ts), so that rows which shared a prefix before share the scaled prefix after,
 * byte for byte. A new block's id is a pure function of (original id, index, prefix-tree copy), so
 * every row is rewritten on its own once the shared ids are known, and no table of new ids is kept.
 *
 * A row of `n` ids of `B` tokens (the last possibly partial, or all whole plus a fresh tail no id
 * names) splits into:
 * - its PREFIX: the leading run of shared ids (stopping at the first id no other row has, as AIPerf
 *   does), whole blocks only: `p` blocks, `p·B` tokens;
 * - the REST: `L − p·B` tokens (the row's own blocks, any block after them, and the tail).
 * With the prefix-len multiplier `m`: at `m ≥ 1` each prefix id becomes `⌊m⌋` ids
 * ({@link scaledBlockId} of (id, 0 … ⌊m⌋ − 1, copy); the id itself when ⌊m⌋ is 1 and the copy 0),
 * then `⌈p·m⌉ − p·⌊m⌋` new blocks of the row's own follow; at `m < 1` the first `max(1, ⌊p·m⌋)`
 * prefix blocks are kept. With the prompt-len multiplier `x` the rest becomes `⌊(L − p·B)·x⌋` tokens.
 * Those own tokens (the rest and the fractional blocks) get new ids derived from the row's first id
 * past the prefix, which no other row has; a row without one gets a fresh tail. When `x` is 1 and no
 * fractional block is added, the rest is kept as it is (its ids and tail). A row without `hash_ids`
 * is left as it is (AIPerf). The result never has fewer than 1 token.
 */
import { fmix32 } from '../util/fmix32.js';
import type { TraceId } from './types.js';

/** How {@link scaleSyntheticPrompt} rescales a prompt. */
export interface BlockScale {
  /** `--synthesis-prefix-len-multiplier` (> 0). */
  prefixFactor: number;
  /** `--synthesis-prompt-len-multiplier` (> 0). */
  promptFactor: number;
  /** Prefix-tree copy (0 … root multiplier − 1); copy 0 keeps the prefix ids when ⌊m⌋ is 1. */
  copy: number;
  /** True for an id that occurs more than once in the trace (dataset/shared-ids.ts). */
  isShared(id: TraceId): boolean;
}

/** A synthetic prompt: exactly `inputLength` tokens over `hashIds` blocks of `blockSize` tokens. */
export interface BlockPrompt {
  inputLength: number;
  hashIds: readonly TraceId[];
  blockSize: number;
}

/** Tolerance of the block-count ceilings: `⌈10 × 1.1⌉` is 11, not the 12 that float noise gives. */
const CEIL_SLACK = 1e-9;

/** What a derived id stands for: one of the blocks a prefix id became, or one of a row's own blocks. */
const PREFIX_ROLE = 0;
const OWN_ROLE = 1;

/**
 * The id of a new block: a 53-bit mix of (original id, index, copy, role), a safe integer, so equal
 * inputs give equal ids in any run, file or process and no table of ids is kept. Every bit of a
 * 64-bit original id counts. Two different inputs share an id with probability about 2^-53 per
 * pair; such a pair shares its text, which a prefix cache sees only when the blocks before them are
 * the same too.
 * @param index the block's index among those derived from `id` (below 2^32).
 * @param role 0: a block a prefix id became; 1: a row's own block derived from its first own id.
 */
export function scaledBlockId(id: TraceId, index: number, copy: number, role = PREFIX_ROLE): number {
  const big = typeof id === 'bigint';
  const lo = big ? Number(id & 0xffffffffn) : id >>> 0;
  const hi = big ? Number((id >> 32n) & 0xffffffffn) : Math.floor(id / 4294967296) >>> 0;
  const a = fmix32((lo ^ 0x9e3779b9) >>> 0);
  const b = fmix32((a ^ hi ^ 0x7f4a7c15) >>> 0);
  const c = fmix32((b ^ index ^ Math.imul(role + 1, 0x165667b1)) >>> 0);
  const d = fmix32((c ^ Math.imul(copy + 1, 0x27d4eb2f) ^ 0xc2b2ae35) >>> 0);
  const e = fmix32((d ^ lo ^ 0x165667b1) >>> 0);
  return (d & 0x1fffff) * 4294967296 + e;
}

/** Number of leading ids that are shared and name whole blocks. */
function prefixBlocks(prompt: BlockPrompt, isShared: (id: TraceId) => boolean): number {
  const whole = Math.min(prompt.hashIds.length, Math.floor(prompt.inputLength / prompt.blockSize));
  let p = 0;
  while (p < whole && isShared(prompt.hashIds[p] as TraceId)) p += 1;
  return p;
}

/** The new prefix ids of `prefix` and the number of own blocks the fractional part of `m` adds. */
function stretchPrefix(prefix: readonly TraceId[], scale: BlockScale): { ids: TraceId[]; extra: number } {
  const m = scale.prefixFactor;
  const per = m >= 1 ? Math.floor(m) : 1;
  const keep = m >= 1 || prefix.length === 0 ? prefix.length : Math.max(1, Math.floor(prefix.length * m));
  const raw = per === 1 && scale.copy === 0;
  const ids: TraceId[] = [];
  for (let j = 0; j < keep; j += 1) {
    const id = prefix[j] as TraceId;
    for (let k = 0; k < per; k += 1) ids.push(raw ? id : scaledBlockId(id, k, scale.copy));
  }
  const extra = m > 1 ? Math.max(0, Math.ceil(prefix.length * m - CEIL_SLACK) - ids.length) : 0;
  return { ids, extra };
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
  if (hashIds.length === 0) return { inputLength: length, hashIds: [] };
  const p = prefixBlocks(prompt, (id) => scale.isShared(id));
  const { ids, extra } = stretchPrefix(hashIds.slice(0, p), scale);
  const prefixTokens = ids.length * blockSize;
  const rest = length - p * blockSize;
  if (scale.promptFactor === 1 && extra === 0)
    return { inputLength: prefixTokens + rest, hashIds: [...ids, ...hashIds.slice(p)] };
  let own = extra * blockSize + Math.floor(rest * scale.promptFactor);
  if (prefixTokens + own === 0) own = 1;
  const anchor = hashIds[p];
  if (anchor !== undefined)
    for (let i = 0; i < Math.ceil(own / blockSize); i += 1)
      ids.push(scaledBlockId(anchor, i, scale.copy, OWN_ROLE));
  return { inputLength: prefixTokens + own, hashIds: ids };
}
