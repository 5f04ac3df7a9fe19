/**
 * Which sessions one shard of a run spread over several processes sends (`--shard-index i
 * --shard-count n`). Trace and dataset files: a session (conversation) goes to shard
 * `FNV-1a 64(UTF-8 bytes of its id) mod n` (a Bailian tree replay's sessions by their tree's root id,
 * so a branch is on its root's shard), so a conversation never spans shards and the assignment
 * is the same on every machine and Node version (no seed, no process state). Synthetic datasets:
 * entry k goes to shard `k mod n` (an even split of a small dataset). Every shard reads the whole
 * file and generates the whole synthetic dataset, then keeps its share: the data a shard sends is
 * the same data the unsharded run sends.
 *
 * FNV-1a: Fowler, Noll, Vo, "The FNV Non-Cryptographic Hash Algorithm" (IETF draft
 * draft-eastlake-fnv), 64-bit offset basis 0xcbf29ce484222325, prime 0x100000001b3.
 */
import { type Conversation, type Dataset, type StreamedTurn, type TraceStream, treeIdOf } from './types.js';

/** One shard of a run: `index` in [0, `count`). */
export interface ShardSpec {
  index: number;
  count: number;
}

/** How a shard's sessions are chosen, as the summary's `shard.session_hash` names it. */
export type SessionAssignment = 'fnv1a64' | 'entry_index';

const TWO_32 = 4294967296;
const encoder = new TextEncoder();

/** FNV-1a 64 of `bytes` as its high and low 32-bit halves (multiplication by 2^40 + 0x1b3 in halves). */
function fnv1a64Halves(bytes: Uint8Array): [number, number] {
  let hi = 0xcbf29ce4;
  let lo = 0x84222325;
  for (const byte of bytes) {
    lo = (lo ^ byte) >>> 0;
    const low = lo * 0x1b3;
    hi = (hi * 0x1b3 + Math.floor(low / TWO_32) + ((lo << 8) >>> 0)) >>> 0;
    lo = low >>> 0;
  }
  return [hi, lo];
}

/** FNV-1a 64 of the UTF-8 bytes of `text`, as an unsigned 64-bit integer. */
export function fnv1a64(text: string): bigint {
  const [hi, lo] = fnv1a64Halves(encoder.encode(text));
  return (BigInt(hi) << 32n) | BigInt(lo);
}

/** The shard (0 … `count` − 1) of the session `sessionId`: FNV-1a 64 of its UTF-8 bytes mod `count`. */
export function sessionShard(sessionId: string, count: number): number {
  const [hi, lo] = fnv1a64Halves(encoder.encode(sessionId));
  return ((hi % count) * TWO_32 + lo) % count;
}

/**
 * The share of `dataset` that `shard` sends: conversations by the hash of their id, or with
 * `entry_index` (a synthetic dataset) the k-th conversation when k mod count is the index.
 */
export function shardDataset(dataset: Dataset, shard: ShardSpec, by: SessionAssignment): Dataset {
  const mine = (c: Conversation, k: number): boolean =>
    (by === 'entry_index' ? k % shard.count : sessionShard(treeIdOf(c), shard.count)) === shard.index;
  const conversations = dataset.conversations.filter(mine);
  const turnCount = conversations.reduce((sum, c) => sum + c.turns.length, 0);
  return { ...dataset, conversations, turnCount };
}

/** A streamed trace cut to one shard's sessions. */
export interface ShardedStream {
  stream: TraceStream;
  /**
   * The earliest first-turn timestamp (ms) among the sessions of every shard read so far, or
   * undefined before any: the unsharded replay's auto-offset zero (fixed-schedule.ts takes the
   * earliest start read before it primes). The first call ends the tracking.
   */
  earliestStartMs(): number | undefined;
}

/**
 * `stream` with only `shard`'s sessions (a tree's by its root id); the rows of the other shards are read (so sessions are
 * formed as in the whole file) and dropped. Drop counters stay the whole file's.
 */
export function shardTraceStream(stream: TraceStream, shard: ShardSpec): ShardedStream {
  let seen: Set<string> | null = new Set();
  let earliest: number | undefined;
  const note = (row: StreamedTurn): void => {
    if (seen === null || seen.has(row.sessionId)) return;
    seen.add(row.sessionId);
    const ts = row.turn.timestampMs;
    if (ts !== undefined && (earliest === undefined || ts < earliest)) earliest = ts;
  };
  async function* mine(): AsyncGenerator<StreamedTurn> {
    for await (const row of stream.turns) {
      note(row);
      if (sessionShard(row.treeId ?? row.sessionId, shard.count) === shard.index) yield row;
    }
  }
  return {
    stream: { ...stream, turns: mine() },
    earliestStartMs: () => {
      seen = null;
      return earliest;
    },
  };
}
