/**
 * `random_pool` loader: a pool of text requests, one per JSONL line (fields in `text-turn.ts`, without
 * `timestamp`, `delay` or `session_id`; AIPerf `random_pool`). Each line becomes a one-turn
 * conversation; the run draws from the pool at random WITH replacement (sampling strategy `random`,
 * see `defaultSamplingStrategy` in `sampling.ts`), so one entry may be sent many times. A directory of
 * named pools (AIPerf's multi-file form) is read by random-pool-folder.ts.
 */
import { stat } from 'node:fs/promises';
import { resolveLoadOptions } from './load-options.js';
import { DEFAULT_POOL_DRAWS, loadPoolFolder } from './random-pool-folder.js';
import { TEXT_DATASET_BLOCK_SIZE } from './single-turn.js';
import { parseTextTurn } from './text-turn.js';
import { collectTraceRows, type TraceRow } from './trace-rows.js';
import type { Dataset, DatasetLoader, LoadOptions, SourceRef } from './types.js';

/** Prefix of every pool entry's conversation id: `random_pool-<line>`. */
export const RANDOM_POOL_SESSION_PREFIX = 'random_pool-';

/**
 * Validates one pool line.
 * @throws {DatasetError} naming file, line and field (including a timing field or `session_id`).
 */
export function parseRandomPoolRow(value: unknown, at: SourceRef): TraceRow {
  return { turn: parseTextTurn(value, '', { timing: false, sessionId: false }, at).turn };
}

async function isDirectory(file: string): Promise<boolean> {
  const info = await stat(file).catch(() => undefined);
  return info?.isDirectory() === true;
}

/**
 * Loads a `random_pool` JSONL file, or a folder of pools (random-pool-folder.ts: `poolDraws`
 * conversations of one entry from each pool, drawn with `randomSeed`). Offsets and speedup have
 * nothing to act on (no timestamps).
 * @throws {DatasetError} for a malformed line (file:line and field), a Git LFS pointer, bad options,
 *   a file with no usable line, or a folder without pools.
 */
export async function loadRandomPool(file: string, options: LoadOptions = {}): Promise<Dataset> {
  const resolved = resolveLoadOptions(file, options, TEXT_DATASET_BLOCK_SIZE);
  if (await isDirectory(file))
    return loadPoolFolder(file, resolved, options.poolDraws ?? DEFAULT_POOL_DRAWS, options.randomSeed ?? 0);
  const { rows, skipped } = await collectTraceRows(file, resolved, parseRandomPoolRow);
  return {
    conversations: rows.map(({ turn }) => ({
      id: `${RANDOM_POOL_SESSION_PREFIX}${turn.source.line}`,
      turns: [turn],
      contextMode: 'message_array_with_responses',
    })),
    turnCount: rows.length,
    blockSize: resolved.blockSize,
    skipped,
    file,
  };
}

/** The `random_pool` dataset type (sampled with replacement; not timestamped). */
export const randomPoolLoader: DatasetLoader = {
  name: 'random_pool',
  defaultBlockSize: TEXT_DATASET_BLOCK_SIZE,
  timestamped: false,
  load: loadRandomPool,
};
