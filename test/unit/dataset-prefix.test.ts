import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBailianTrace } from '../../src/dataset/bailian.js';
import { loadMooncakeTrace } from '../../src/dataset/mooncake.js';
import { idealPrefixHit, type PrefixRequest } from '../../src/dataset/prefix-analysis.js';
import { type CacheBlock, IdealPrefixCache, promptBlocks } from '../../src/dataset/prefix-chain.js';

// Reference figures ("reuse_prefix") computed independently on the same files: trace-data.md appendix.
test('reproduces the reference block hit ratios of the example traces', async () => {
  const multiturn = idealPrefixHit(
    await loadBailianTrace('examples/traces/bailian_traceA_multiturn_head40.jsonl'),
  );
  assert.equal(multiturn.totalBlocks, 4209);
  assert.equal(multiturn.blockHitRatio.toFixed(4), '0.4566');
  const stratified = idealPrefixHit(
    await loadBailianTrace('examples/traces/bailian_traceA_stratified_head24.jsonl'),
  );
  assert.equal(stratified.totalBlocks, 2211);
  assert.equal(stratified.blockHitRatio.toFixed(4), '0.1425');
  const mooncake = idealPrefixHit(
    await loadMooncakeTrace('examples/traces/mooncake_conversation_trace.jsonl'),
  );
  assert.equal(mooncake.totalBlocks, 288500);
  assert.equal(mooncake.blockHitRatio.toFixed(4), '0.3664');
});

const req = (hashIds: number[], inputLength: number, timestampMs?: number): PrefixRequest => ({
  hashIds,
  inputLength,
  blockSize: 4,
  timestampMs,
});

test('a block hits only when the whole chain up to it was seen, not when its id was seen elsewhere', () => {
  const stats = idealPrefixHit([
    req([1, 2, 3], 12),
    req([9, 2, 3], 12), // ids 2, 3 seen before but after a different first block: no hit
    req([1, 2, 7], 12), // blocks 0..1 hit, block 2 misses
    req([1, 2, 3, 3], 16), // blocks 0..2 hit; the repeated 3 at position 3 is new
  ]);
  assert.equal(stats.totalBlocks, 13);
  assert.equal(stats.hitBlocks, 5);
  assert.equal(stats.totalTokens, 52);
  assert.equal(stats.hitTokens, 20);
  assert.equal(stats.blockHitRatio, 5 / 13);
  assert.equal(stats.tokenHitRatio, 20 / 52);
});

test('a partial last block counts its own tokens; tokens beyond the ids always miss', () => {
  const stats = idealPrefixHit([req([1, 2], 6), req([1, 2], 6), req([1], 10)]);
  // second request: 4 + 2 tokens hit; third: block 0 (4 tokens) hits, 6 uncovered tokens miss.
  assert.equal(stats.hitTokens, 10);
  assert.equal(stats.totalTokens, 22);
  assert.equal(stats.hitBlocks, 3);
});

test('a block first sent partial holds only its tokens: a later whole use hits that many, then holds it whole', () => {
  // Block size 4: [1, 2] over 6 tokens sends id 2 with 2 tokens; then [1, 2, 3] over 12 sends it whole.
  const stats = idealPrefixHit([req([1, 2], 6), req([1, 2, 3], 12), req([1, 2, 3], 12)]);
  // Second: 4 + 2 (the prefix ends inside block 2); third: 4 + 4 + 4.
  assert.equal(stats.hitTokens, 6 + 12);
  assert.equal(stats.hitBlocks, 2 + 3);
  assert.equal(stats.sizeConflictIds, 1);
});

test('requests are taken in timestamp order (stable), so a later-listed earlier request seeds the cache', () => {
  const stats = idealPrefixHit([req([1, 2], 8, 20), req([5], 4, 5), req([1, 2], 8, 10)]);
  // Arrival: [5]@5, [1,2]@10, [1,2]@20 → the @20 request hits both blocks.
  assert.equal(stats.hitBlocks, 2);
  const tie = idealPrefixHit([req([1], 4, 0), req([1], 4, 0)]);
  assert.equal(tie.hitBlocks, 1);
});

test('an empty input gives zero counts and zero ratios', () => {
  assert.deepEqual(idealPrefixHit([]), {
    sizeConflictIds: 0,
    hitBlocks: 0,
    totalBlocks: 0,
    hitTokens: 0,
    totalTokens: 0,
    blockHitRatio: 0,
    tokenHitRatio: 0,
  });
});

test("a run's ideal cache: tails hit only for the same prompt, ids compare by value, a full cache stops answering", () => {
  const cache = new IdealPrefixCache(6);
  const hit = (blocks: CacheBlock[]) => cache.admit(blocks, 0).settle(null);
  assert.deepEqual(hit(promptBlocks([1, 2], 10, 4, 'a')), { blocks: 0, tokens: 0 });
  // Same ids, same tail key (the same prompt sent again): everything hits, the partial tail included.
  assert.deepEqual(hit(promptBlocks([1, 2], 10, 4, 'a')), { blocks: 3, tokens: 10 });
  // Another request's tail never hits; an id beyond 2^53 given as bigint equals the same number.
  assert.deepEqual(hit(promptBlocks([1n, 2], 10, 4, 'b')), { blocks: 2, tokens: 8 });
  assert.equal(cache.size, 4);
  assert.equal(hit(promptBlocks([2 ** 53 + 2], 4, 4))?.tokens, 0);
  assert.equal(hit(promptBlocks([2n ** 53n + 2n], 4, 4))?.tokens, 4);
  // The sixth distinct block fills it: from then on no answer (a hit could be missed).
  assert.equal(hit(promptBlocks([2n ** 53n + 3n], 4, 4)), null);
  assert.equal(cache.full, true);
  assert.equal(hit(promptBlocks([1, 2], 8, 4)), null);
});

test('a prompt started later but on the wire first counts for one started earlier', () => {
  const cache = new IdealPrefixCache();
  const early = cache.admit(promptBlocks([1, 2, 3], 12, 4), 100);
  const late = cache.admit(promptBlocks([1, 2, 4], 12, 4), 200);
  assert.deepEqual(late.settle(null), { blocks: 2, tokens: 8 });
  // The early one reached the wire after the late one was admitted: their shared blocks count for it.
  assert.deepEqual(early.settle(250), { blocks: 2, tokens: 8 });
  // Had it been on the wire before the late one started, nothing would.
  assert.deepEqual(early.settle(150), { blocks: 0, tokens: 0 });
  assert.deepEqual(early.settle(null), { blocks: 0, tokens: 0 });
});
