/**
 * Whole-session sampling of a trace (`--trace-session-sample-ratio R`, AIPerf's name): a session is
 * kept or dropped with all its rows, so the prefix reuse inside a session survives. The choice is a
 * pure function of the session's key and the seed (`--random-seed`): a 64-bit hash of the key,
 * mixed with the seed, kept when below R·2^64. A streamed trace therefore needs no memory to decide,
 * the whole-file load and the stream keep the same sessions, and every shard of a sharded run
 * (dataset/shard.ts, whose hash is the plain FNV-1a 64 of the session id) sees the same sample.
 *
 * The key is the session's tree: a Bailian branch session's root session id (`treeId`), else the
 * session's own id ({@link sessionSampleKey}), so a tree of sessions is kept or dropped as one.
 *
 * Hash: FNV-1a 64 of the key's UTF-8 bytes (dataset/shard.ts), XOR a seed word, then the 64-bit
 * finalizer of MurmurHash3 (Austin Appleby, `fmix64`: constants 0xff51afd7ed558ccd and
 * 0xc4ceb9fe1a85ec53) so that every bit of the result depends on every bit of the key and the seed.
 * The seed word is the same finalizer of seed + 0x9e3779b97f4a7c15 (the golden-ratio increment of
 * SplitMix64, Steele, Lea and Flood, OOPSLA 2014).
 */
import { fnv1a64 } from './shard.js';
import type { Conversation, Dataset, SessionSampleCounts, StreamedTurn, TraceStream } from './types.js';
import { DatasetError } from './types.js';

/** A whole-session sample: keep a share `ratio` (0 < ratio ≤ 1) of the sessions, chosen by `seed`. */
export interface SessionSampleSpec {
  ratio: number;
  /** `--random-seed` (an integer ≥ 0). */
  seed: number;
}

const MASK_64 = (1n << 64n) - 1n;

/** MurmurHash3's 64-bit finalizer of `k` (an unsigned 64-bit integer). */
function fmix64(k: bigint): bigint {
  let x = k;
  x ^= x >> 33n;
  x = (x * 0xff51afd7ed558ccdn) & MASK_64;
  x ^= x >> 33n;
  x = (x * 0xc4ceb9fe1a85ec53n) & MASK_64;
  x ^= x >> 33n;
  return x;
}

/**
 * The key a session is sampled by: its tree's root session id when it belongs to a Bailian tree
 * (`treeId`), else its own id (a `StreamedTurn`'s `sessionId`, a `Conversation`'s `id`).
 */
export function sessionSampleKey(sessionId: string, treeId: string | undefined): string {
  return treeId ?? sessionId;
}

/**
 * The keep test of a sample: true for the keys it keeps. Pure: the same (key, ratio, seed) gives the
 * same answer in every process, on every machine.
 * @throws {RangeError} for a ratio outside (0, 1] or a seed that is not a safe integer ≥ 0.
 */
export function sessionSampler(spec: SessionSampleSpec): (key: string) => boolean {
  const { ratio, seed } = spec;
  if (!(ratio > 0 && ratio <= 1)) throw new RangeError(`session sample ratio ${ratio} is not in (0, 1]`);
  if (!Number.isSafeInteger(seed) || seed < 0)
    throw new RangeError(`session sample seed ${seed} is not an integer >= 0`);
  if (ratio === 1) return () => true;
  const seedWord = fmix64((BigInt(seed) + 0x9e3779b97f4a7c15n) & MASK_64);
  // ratio has 53 bits of precision: ⌊ratio·2^53⌋·2^11 is R·2^64 to within 2^11.
  const below = BigInt(Math.floor(ratio * 2 ** 53)) << 11n;
  return (key) => fmix64(fnv1a64(key) ^ seedWord) < below;
}

function emptyCounts(spec: SessionSampleSpec): SessionSampleCounts {
  return { ratio: spec.ratio, seed: spec.seed, sessionsRead: 0, sessionsKept: 0, rowsRead: 0, rowsKept: 0 };
}

function noneKept(file: string, counts: SessionSampleCounts): DatasetError {
  return new DatasetError(
    `${file}: --trace-session-sample-ratio ${counts.ratio} with --random-seed ${counts.seed} kept none of its ${counts.sessionsRead} sessions (${counts.rowsRead} rows); give a larger ratio or another seed`,
    file,
    undefined,
    'trace-session-sample-ratio',
  );
}

/**
 * The sessions of `dataset` that `spec` keeps, whole; `skipped.sessionSample` holds the counts (the
 * same `skipped` object, shared with the dataset given).
 * @throws {DatasetError} when it keeps no session of a dataset that has some.
 */
export function sampleDataset(dataset: Dataset, spec: SessionSampleSpec): Dataset {
  const keep = sessionSampler(spec);
  const counts = emptyCounts(spec);
  const kept = (c: Conversation): boolean => {
    counts.sessionsRead += 1;
    counts.rowsRead += c.turns.length;
    if (!keep(sessionSampleKey(c.id, c.treeId))) return false;
    counts.sessionsKept += 1;
    counts.rowsKept += c.turns.length;
    return true;
  };
  const conversations = dataset.conversations.filter(kept);
  dataset.skipped.sessionSample = counts;
  if (counts.sessionsKept === 0 && counts.sessionsRead > 0) throw noneKept(dataset.file, counts);
  return { ...dataset, conversations, turnCount: counts.rowsKept };
}

/**
 * `stream` with only the rows of the sessions `spec` keeps; the other rows are read and dropped.
 * `stream.skipped.sessionSample` holds live counts, final once the rows are exhausted. Sessions are
 * counted as a row opens one: a session id not seen since its session's last row (`lastOfSession`),
 * so only the ids of sessions whose end the format cannot signal are remembered (as the loaders and
 * the replay remember them).
 * @throws {DatasetError} (while iterating, at the end of the file) when it kept no row of a trace
 *   that has some.
 */
export function sampleTraceStream(stream: TraceStream, spec: SessionSampleSpec): TraceStream {
  const keep = sessionSampler(spec);
  const counts = emptyCounts(spec);
  stream.skipped.sessionSample = counts;
  const open = new Set<string>();
  let lastKey: string | null = null;
  let lastKept = false;
  async function* kept(): AsyncGenerator<StreamedTurn> {
    for await (const row of stream.turns) {
      const key = sessionSampleKey(row.sessionId, row.treeId);
      if (key !== lastKey) {
        lastKey = key;
        lastKept = keep(key);
      }
      const opens = !open.has(row.sessionId);
      if (row.lastOfSession) open.delete(row.sessionId);
      else if (opens) open.add(row.sessionId);
      counts.rowsRead += 1;
      if (opens) counts.sessionsRead += 1;
      if (!lastKept) continue;
      counts.rowsKept += 1;
      if (opens) counts.sessionsKept += 1;
      yield row;
    }
    if (counts.rowsKept === 0 && counts.rowsRead > 0) throw noneKept(stream.file, counts);
  }
  return { ...stream, turns: kept() };
}
