/**
 * Sharding's division of the load (`--shard-index i --shard-count n`), through the profiling phase
 * a run uses, in virtual time: the shards' records together against the unsharded run's. And the
 * session hash, against the published FNV-1a 64 test vectors.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { fnv1a64, sessionShard } from '../../src/dataset/shard.js';
import { textConversations, type VirtualRecord, virtualPhase } from '../helpers/virtual-phase.js';

/** The records of each of `count` shards run with `config` (and the shard flags). */
async function shards(
  count: number,
  config: Partial<ProfileConfig>,
  durationMs = 100,
): Promise<VirtualRecord[][]> {
  const out: VirtualRecord[][] = [];
  for (let i = 0; i < count; i++) {
    const { records } = await virtualPhase({
      config: { ...config, shardIndex: i, shardCount: count },
      conversations: textConversations(12),
      durationMs: () => durationMs,
    });
    out.push(records);
  }
  return out;
}

/** Most requests in flight at once. */
function peakInFlight(records: VirtualRecord[]): number {
  const events = records.flatMap((r) => [
    { at: r.startMs, d: 1 },
    { at: r.endMs, d: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.d - b.d);
  let now = 0;
  let peak = 0;
  for (const e of events) {
    now += e.d;
    peak = Math.max(peak, now);
  }
  return peak;
}

const rounded = (ms: number): number => Math.round(ms * 1000) / 1000;

test('--request-rate with constant arrivals: the shards send at the unsharded run’s ticks, interleaved', async () => {
  const config = { requestRate: 30, arrivalPattern: 'constant' as const, requestCount: 12 };
  const { records: whole } = await virtualPhase({
    config,
    conversations: textConversations(12),
    durationMs: () => 100,
  });
  const parts = await shards(3, config);
  assert.deepEqual(
    parts.map((p) => p.length),
    [4, 4, 4],
  );
  assert.deepEqual(
    parts
      .flat()
      .map((r) => rounded(r.startMs))
      .sort((a, b) => a - b),
    whole.map((r) => rounded(r.startMs)),
  );
});

test('--request-rate with Poisson arrivals: each shard draws its own intervals', async () => {
  const parts = await shards(2, { requestRate: 20, requestCount: 10 });
  const gaps = parts.map((p) =>
    p.slice(1).map((r, k) => rounded(r.startMs - (p[k] as VirtualRecord).startMs)),
  );
  assert.notDeepEqual(gaps[0], gaps[1]);
});

test('--concurrency and --request-count split with the remainder to the lowest indices', async () => {
  const parts = await shards(3, { concurrency: 5, requestCount: 11 });
  assert.deepEqual(
    parts.map((p) => p.length),
    [4, 4, 3],
  );
  assert.deepEqual(
    parts.map((p) => peakInFlight(p)),
    [2, 2, 1],
  );
});

test('the session hash is FNV-1a 64 of the UTF-8 bytes (published vectors), and its shard that hash mod n', () => {
  assert.equal(fnv1a64('').toString(16), 'cbf29ce484222325');
  assert.equal(fnv1a64('a').toString(16), 'af63dc4c8601ec8c');
  assert.equal(fnv1a64('foobar').toString(16), '85944171f73967e8');
  for (const id of ['75', '121', 'session-é', 'mooncake-9']) {
    for (const n of [1, 2, 3, 7, 1000]) assert.equal(sessionShard(id, n), Number(fnv1a64(id) % BigInt(n)));
  }
});
