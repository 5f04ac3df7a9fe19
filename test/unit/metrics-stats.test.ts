import assert from 'node:assert/strict';
import { test } from 'node:test';
import { computeStats, percentileSorted } from '../../src/metrics/stats.js';

const close = (a: number, b: number): void => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≈ ${b}`);

test('numpy-linear percentiles on small arrays', () => {
  const s = Float64Array.from([1, 2, 3, 4]);
  close(percentileSorted(s, 90), 3.7); // idx 0.9·3 = 2.7 → 3 + 0.7·(4 − 3)
  close(percentileSorted(s, 50), 2.5); // idx 1.5 → 2 + 0.5·1
  close(percentileSorted(s, 1), 1.03); // idx 0.03 → 1 + 0.03·1
  close(percentileSorted(Float64Array.from([1, 2, 3, 4, 5]), 30), 2.2); // idx 1.2 → 2 + 0.2
  close(percentileSorted(Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]), 95), 9.55); // idx 8.55
});

test('stats: unsorted input, population std, count, single value', () => {
  const st = computeStats(Float64Array.from([4, 2, 8, 6]));
  assert.ok(st !== undefined);
  assert.equal(st.avg, 5); // 20/4
  assert.equal(st.min, 2);
  assert.equal(st.max, 8);
  assert.equal(st.count, 4);
  // deviations −3, −1, 1, 3 → squares 9+1+1+9 = 20 → 20/4 = 5 → √5 (population, ddof 0)
  close(st.std, Math.sqrt(5));
  close(st.p25, 3.5); // idx 0.75 over [2,4,6,8] → 2 + 0.75·2
  const one = computeStats(Float64Array.from([7]));
  assert.equal(one?.p99, 7);
  assert.equal(one?.std, 0);
});

test('empty distributions are omitted', () => {
  assert.equal(computeStats(new Float64Array(0)), undefined);
});
