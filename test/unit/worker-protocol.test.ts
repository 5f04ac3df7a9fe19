/** Pure pieces of the worker-pool protocol: session affinity, clock offset, thread CPU parsing. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { originOffsetNs, threadCpuSeconds, workerIndexFor } from '../../src/client/worker-protocol.js';

test('workerIndexFor is stable per conversation and spreads sessions over every worker', () => {
  const counts = [0, 0, 0, 0];
  for (let i = 0; i < 4000; i++) {
    const index = workerIndexFor(`session-${i}`, 4);
    assert.equal(workerIndexFor(`session-${i}`, 4), index);
    counts[index] = (counts[index] ?? 0) + 1;
  }
  for (const count of counts) assert.ok(count > 800 && count < 1200, `uneven spread ${counts.join(',')}`);
  assert.equal(workerIndexFor('anything', 1), 0);
});

test('originOffsetNs maps a later-started thread onto the main clock', () => {
  assert.equal(originOffsetNs(1000.5, 1000.5), 0);
  assert.equal(originOffsetNs(1_700_000_000_000.25, 1_700_000_000_003.75), 3.5e6);
});

test('threadCpuSeconds sums utime and stime ticks, null when unreadable', () => {
  const stat = '123 (node worker) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0';
  assert.equal(
    threadCpuSeconds(() => stat),
    3,
  );
  assert.equal(
    threadCpuSeconds(() => {
      throw new Error('no /proc');
    }),
    null,
  );
});
