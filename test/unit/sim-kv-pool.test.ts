import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainedBlockKeys, KvPool } from '../../src/simulator/kv-pool.js';

const block = (start: number): number[] => Array.from({ length: 16 }, (_, i) => start + i);

test('block keys are chained: a shared middle block gets a different key', () => {
  const a = chainedBlockKeys([...block(0), ...block(100), ...block(200)], 16);
  const b = chainedBlockKeys([...block(50), ...block(100), ...block(200)], 16);
  assert.equal(a.length, 3);
  assert.notEqual(a[1], b[1]);
  assert.deepEqual(chainedBlockKeys([...block(0), ...block(100), 7], 16), a.slice(0, 2));
});

test('leading hits only, at least one prompt token recomputed', () => {
  const pool = new KvPool(100, 16, true);
  const ids = [...block(0), ...block(100)];
  const keys = chainedBlockKeys(ids, 16);
  const first = pool.allocate(keys, 32, 3);
  assert.ok(first);
  assert.equal(first.hitKeys.length, 0);
  pool.commitPrompt(first, keys);
  pool.release(first);
  const again = pool.allocate(keys, 32, 3);
  assert.equal(again?.hitKeys.length, 1, 'a fully cached 32-token prompt reuses 16 tokens');
  const longer = pool.allocate(chainedBlockKeys([...ids, 1], 16), 33, 3);
  assert.equal(longer?.hitKeys.length, 2);
  const s = pool.stats();
  assert.equal(s.hitTokens, 48);
  assert.equal(s.queryTokens, 97);
});

test('LRU eviction of idle blocks and refusal when held blocks fill the pool', () => {
  const pool = new KvPool(4, 16, true);
  const k1 = chainedBlockKeys([...block(0), ...block(16)], 16);
  const a = pool.allocate(k1, 32, 2);
  assert.ok(a);
  pool.commitPrompt(a, k1);
  const b = pool.allocate(chainedBlockKeys(block(500), 16), 16, 2);
  assert.ok(b);
  assert.equal(pool.allocate([], 1, 1), null, 'all four blocks are held');
  pool.release(a);
  assert.equal(pool.stats().idleCachedBlocks, 2);
  const c = pool.allocate([], 1, 2);
  assert.ok(c);
  assert.equal(pool.stats().evictedBlocks, 2);
  assert.equal(pool.stats().usedBlocks, 4);
});

test('prefix cache off: never hits, blocks still accounted', () => {
  const pool = new KvPool(10, 16, false);
  const keys = chainedBlockKeys([...block(0), ...block(16)], 16);
  const a = pool.allocate(keys, 32, 2);
  assert.ok(a);
  pool.commitPrompt(a, keys);
  pool.release(a);
  assert.equal(pool.allocate(keys, 32, 2)?.hitKeys.length, 0);
  assert.equal(pool.stats().usedBlocks, 2);
});

test('eviction takes the least recently used idle block: a block hit again is kept, an older one goes', () => {
  const pool = new KvPool(3, 16, true);
  const keysOf = (start: number): number[] => chainedBlockKeys(block(start), 16);
  // Three one-block prompts, computed and released in the order A, B, C.
  for (const start of [0, 100, 200]) {
    const alloc = pool.allocate(keysOf(start), 16, 1);
    assert.ok(alloc);
    pool.commitPrompt(alloc, keysOf(start));
    pool.release(alloc);
  }
  assert.equal(pool.stats().idleCachedBlocks, 3);
  // A 17-token prompt starting with A's block hits it; releasing makes A the most recently used.
  const reuse = pool.allocate(chainedBlockKeys([...block(0), 1], 16), 17, 2);
  assert.equal(reuse?.hitKeys.length, 1);
  assert.equal(pool.stats().evictedBlocks, 1, 'its second block evicted the oldest idle block, B');
  pool.release(reuse as NonNullable<typeof reuse>);
  const hits = (start: number): number =>
    pool.allocate(chainedBlockKeys([...block(start), 1], 16), 17, 1)?.hitKeys.length ?? -1;
  assert.equal(hits(100), 0, 'B was evicted');
  assert.equal(hits(0), 1, 'A was kept');
});
