/**
 * Rescaling a row's KV-cache block ids when its prompt length is multiplied, so that
 * `hash_ids.length` stays consistent with `ceil(ISL / blockSize)` and rows that shared a prefix
 * before still share the proportionally scaled prefix after.
 *
 * New block k covers scaled tokens [k·B, (k+1)·B), which come from original block
 * j = floor(k / m). Its id is a fresh integer assigned to the pair (original id at j, k), so equal
 * original prefixes map to equal new prefixes, and different positions never collide.
 */

import type { TraceId } from '../dataset/types.js';

/** Assigns fresh ids to (original id, new position) pairs, in first-seen order from 0. */
export class BlockIdMapper {
  private readonly ids = new Map<string, number>();

  /** The new id of original id `originalId` placed at new block position `position`. */
  idFor(originalId: TraceId, position: number): number {
    const key = `${originalId}@${position}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
    }
    return id;
  }
}

/** Inputs of {@link scaleHashIds}. */
export interface HashScaleInput {
  /** The row's block ids as read (64-bit ids beyond 2^53 − 1 as bigints). */
  hashIds: readonly TraceId[];
  /** Original prompt tokens. */
  inputLength: number;
  /** Scaled prompt tokens. */
  newInputLength: number;
  /** Prompt length multiplier m (> 0). */
  multiplier: number;
  blockSize: number;
}

/**
 * The block ids of the scaled row. With m = 1 the ids are returned unchanged. A row whose ids cover
 * its whole prompt gets `ceil(newInputLength / blockSize)` ids; a row with fewer ids (fresh tail)
 * gets the scaled count `ceil(ids · m)`, capped the same way.
 */
export function scaleHashIds(input: HashScaleInput, mapper: BlockIdMapper): TraceId[] {
  const { hashIds, multiplier, blockSize } = input;
  if (multiplier === 1 || hashIds.length === 0) return [...hashIds];
  const needed = Math.ceil(input.newInputLength / blockSize);
  const full = hashIds.length >= Math.ceil(input.inputLength / blockSize);
  const count = full ? needed : Math.min(needed, Math.ceil(hashIds.length * multiplier));
  const out: TraceId[] = [];
  for (let k = 0; k < count; k += 1) {
    const j = Math.min(hashIds.length - 1, Math.floor(k / multiplier));
    out.push(mapper.idFor(hashIds[j]!, k));
  }
  return out;
}
