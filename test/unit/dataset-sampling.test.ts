import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createConversationSampler,
  defaultSamplingStrategy,
  isSamplingStrategy,
  SAMPLING_STRATEGIES,
  sampleConversationOrder,
} from '../../src/dataset/sampling.js';

test('sequential wraps around in dataset order', () => {
  assert.deepEqual(sampleConversationOrder('sequential', 3, 7, 99), [0, 1, 2, 0, 1, 2, 0]);
});

test('shuffle: every pass is a permutation, passes differ, and the seed reproduces the order', () => {
  const order = sampleConversationOrder('shuffle', 10, 50, 0);
  for (let pass = 0; pass < 5; pass += 1) {
    const slice = order.slice(pass * 10, pass * 10 + 10);
    assert.deepEqual(
      [...slice].sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
  }
  assert.notDeepEqual(order.slice(0, 10), order.slice(10, 20));
  assert.deepEqual(sampleConversationOrder('shuffle', 10, 50, 0), order);
  assert.notDeepEqual(sampleConversationOrder('shuffle', 10, 50, 1), order);
  // A partial last pass has no repeats either.
  const partial = sampleConversationOrder('shuffle', 10, 15, 4).slice(10);
  assert.equal(new Set(partial).size, 5);
});

test('random: with replacement, roughly uniform, reproducible per seed', () => {
  const order = sampleConversationOrder('random', 4, 8000, 12);
  const counts = [0, 0, 0, 0];
  for (const i of order) counts[i]! += 1;
  for (const n of counts) assert.ok(Math.abs(n - 2000) < 150, `count ${n}`);
  const small = sampleConversationOrder('random', 5, 5, 12);
  assert.ok(new Set(sampleConversationOrder('random', 5, 50, 12)).size <= 5);
  assert.deepEqual(sampleConversationOrder('random', 5, 5, 12), small);
});

test('an endless sampler continues the same order as the array form', () => {
  const sampler = createConversationSampler('shuffle', 6, 3);
  const streamed = Array.from({ length: 20 }, () => sampler.next());
  assert.deepEqual(streamed, sampleConversationOrder('shuffle', 6, 20, 3));
});

test('defaults and names follow AIPerf: random_pool random, synthetic shuffle, files sequential', () => {
  assert.deepEqual(SAMPLING_STRATEGIES, ['sequential', 'random', 'shuffle']);
  assert.equal(defaultSamplingStrategy(undefined), 'shuffle');
  assert.equal(defaultSamplingStrategy('random_pool'), 'random');
  assert.equal(defaultSamplingStrategy('single_turn'), 'sequential');
  assert.ok(isSamplingStrategy('shuffle'));
  assert.ok(!isSamplingStrategy('roundrobin'));
});

test('bad counts are range errors', () => {
  assert.throws(() => sampleConversationOrder('random', 0, 5, 1), RangeError);
  assert.throws(() => sampleConversationOrder('random', 3, -1, 1), RangeError);
  assert.deepEqual(sampleConversationOrder('shuffle', 3, 0, 1), []);
});
