/**
 * Whether shard folders make one whole run: one shard per index 0…count−1, all of the same sharded
 * run (same count, session hash, start time, the options that decide how records are summarized,
 * and the same run identity: trace and options digests, shard/run-identity.ts), each completed. Disagreements and duplicates are errors; missing and unfinished
 * shards are gaps that `--allow-partial` accepts.
 */
import { TokenloadError } from '../errors.js';
import { optionDifferences } from '../shard/run-identity.js';
import type { ShardFolder, ShardSection } from './shard-folder.js';

/** Shard folders that cannot be merged, or (without `--allow-partial`) do not make a whole run. */
export class ShardSetError extends TokenloadError {
  override readonly name = 'ShardSetError';
  constructor(message: string) {
    super('E_SHARDS', message);
  }
}

/** A shard folder whose `shard` section was read. */
export type IdentifiedShard = ShardFolder & { shard: ShardSection };

/** The shards given, sorted out. */
export interface ShardSet {
  /** `shard.count` of every shard. */
  count: number;
  /** Shards with a section, by index. */
  shards: IdentifiedShard[];
  /** Runs that failed before writing a `shard` section (index unknown). */
  unidentified: ShardFolder[];
  /** Indices in 0…count−1 that no folder has. */
  missing: number[];
}

/**
 * `input_config` keys that decide how records are summarized; shards that differ in one would
 * make a merged summary no single run could have.
 */
export const SUMMARY_CONFIG_KEYS = ['endpointType', 'streaming', 'useServerTokenCount', 'goodput'] as const;

function named(s: ShardFolder): string {
  return s.shard === null ? s.dir : `shard ${s.shard.index} (${s.dir})`;
}

/** Throws naming each shard's value when the shards disagree on `what`. */
function checkSame(shards: readonly IdentifiedShard[], what: string, pick: (s: IdentifiedShard) => unknown) {
  const first = shards[0] as IdentifiedShard;
  const text = (s: IdentifiedShard): string => JSON.stringify(pick(s)) ?? 'absent';
  if (shards.every((s) => text(s) === text(first))) return;
  const values = shards.map((s) => `${named(s)} ${text(s)}`).join(', ');
  throw new ShardSetError(`the shards are not of one run: they disagree on ${what}: ${values}`);
}

function checkIndices(shards: readonly IdentifiedShard[]): void {
  for (let i = 1; i < shards.length; i++) {
    const [a, b] = [shards[i - 1] as IdentifiedShard, shards[i] as IdentifiedShard];
    if (a.shard.index === b.shard.index)
      throw new ShardSetError(`shard ${a.shard.index} given twice: ${a.dir} and ${b.dir}`);
  }
}

/**
 * Refuses shards that do not record one run identity (`shard.run_identity`, shard/run-identity.ts):
 * a shard without one, another trace (size or head-and-tail digest), or other options (the differing
 * `input_config` keys named; a default given on one shard and left out on another is no
 * difference, shard/run-identity.ts `optionDifferences`), each against the first shard.
 */
function checkIdentity(shards: readonly IdentifiedShard[]): void {
  const lacking = shards.filter((s) => s.shard.run_identity === undefined);
  if (lacking.length > 0)
    throw new ShardSetError(
      `cannot tell the shards are of one run: ${lacking.map(named).join(', ')} record no shard.run_identity (written by a tokenload before it); run the shards again with this version`,
    );
  const first = shards[0] as IdentifiedShard;
  const a = first.shard.run_identity as NonNullable<ShardSection['run_identity']>;
  for (const s of shards.slice(1)) {
    const b = s.shard.run_identity as NonNullable<ShardSection['run_identity']>;
    if (a.trace_sha256 !== b.trace_sha256 || a.trace_bytes !== b.trace_bytes)
      throw new ShardSetError(
        `the shards are not of one run: ${named(s)} replayed another input than ${named(first)}: ` +
          `${first.summary.input_config.inputFile ?? 'no file'} (${a.trace_bytes ?? '-'} bytes, digest ${a.trace_sha256 ?? 'none'}) vs ` +
          `${s.summary.input_config.inputFile ?? 'no file'} (${b.trace_bytes ?? '-'} bytes, digest ${b.trace_sha256 ?? 'none'})`,
      );
    if (a.options_sha256 === b.options_sha256) continue;
    // Digests of another tokenload (before defaults were resolved) differ for a default spelled out.
    const diff = optionDifferences(first.summary.input_config, s.summary.input_config);
    if (diff.length === 0) continue;
    const what = diff.join('; ');
    throw new ShardSetError(
      `the shards are not of one run: ${named(s)} differs from ${named(first)} in the options that decide what is sent: ${what}`,
    );
  }
}

/**
 * Sorts `folders` into a {@link ShardSet}.
 * @throws {ShardSetError} when no folder has a `shard` section, two have the same index, they
 *   disagree on `shard.count`, `shard.session_hash`, `shard.start_at_ms` or a
 *   {@link SUMMARY_CONFIG_KEYS} option (each shard's value named), or their `shard.run_identity`
 *   is missing or differs (the shard and what differs named).
 */
export function checkShardSet(folders: readonly ShardFolder[]): ShardSet {
  const shards = folders
    .filter((f): f is IdentifiedShard => f.shard !== null)
    .sort((a, b) => a.shard.index - b.shard.index);
  const unidentified = folders.filter((f) => f.shard === null);
  if (shards.length === 0)
    throw new ShardSetError(
      `no shard to merge: ${unidentified.map((f) => f.dir).join(', ')} failed before writing a shard section`,
    );
  checkSame(shards, 'shard.count', (s) => s.shard.count);
  checkIndices(shards);
  checkSame(shards, 'shard.session_hash', (s) => s.shard.session_hash);
  checkSame(shards, 'shard.start_at_ms', (s) => s.shard.start_at_ms);
  for (const key of SUMMARY_CONFIG_KEYS)
    checkSame(shards, `input_config.${key}`, (s) => s.summary.input_config[key]);
  checkIdentity(shards);
  const count = (shards[0] as IdentifiedShard).shard.count;
  const present = new Set(shards.map((s) => s.shard.index));
  const missing: number[] = [];
  for (let i = 0; i < count; i++) if (!present.has(i)) missing.push(i);
  return { count, shards, unidentified, missing };
}

/**
 * Why the set is not one whole run, one phrase each: a missing index (`shard 2 of 4 missing`), a
 * shard whose run did not complete (`shard 1 (dir) failed: reason`); empty when it is whole.
 */
export function gapsOf(set: ShardSet): string[] {
  const gaps = set.missing.map((i) => `shard ${i} of ${set.count} missing`);
  for (const s of [...set.shards, ...set.unidentified]) {
    const status = s.summary.run_status;
    if (status.status === 'completed') continue;
    const where = s.shard === null ? `${s.dir} (no shard section)` : named(s);
    gaps.push(`${where} ${status.status}${status.reason === null ? '' : `: ${status.reason}`}`);
  }
  return gaps;
}
