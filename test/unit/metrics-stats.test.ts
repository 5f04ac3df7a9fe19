import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  intervalRanks,
  P999_MIN_COUNT,
  percentileConfidence,
  percentileInterval,
} from '../../src/metrics/percentile-ci.js';
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

/** 1, 2, …, n as ascending values: the value at rank r is r. */
const ranks = (n: number): Float64Array => Float64Array.from({ length: n }, (_, i) => i + 1);

test('95 % interval of a percentile: the order-statistic ranks of binomial tables', () => {
  // Binomial(20, 0.5): P(B ≤ 5) = 0.0207 ≤ 2.5 % < P(B ≤ 6) = 0.0577, P(B ≤ 14) = 0.9793 ≥ 97.5 % >
  // P(B ≤ 13) = 0.9423, so the median of 20 values lies in [x_(6), x_(15)] (coverage 0.9586).
  assert.deepEqual(percentileConfidence(ranks(20)).ci95.p50, { low: 6, high: 15 });
  // n = 100: [x_(40), x_(61)], the interval textbooks give for the median of 100 values.
  assert.deepEqual(intervalRanks(100, 0.5), { low: 40, high: 61 });
  // Six values bound the median by their extremes (each side misses with 1/64); five cannot (1/32 > 2.5 %).
  assert.deepEqual(percentileInterval(ranks(6), 0.5), { low: 1, high: 6 });
  assert.deepEqual(percentileInterval(ranks(5), 0.5), { low: null, high: null });
});

test('95 % interval: the upper bound of p99 needs 0.99^n ≤ 2.5 % (n ≥ 368); the interval narrows with n', () => {
  assert.equal(intervalRanks(367, 0.99).high, null); // 0.99^367 = 0.02501
  assert.equal(intervalRanks(368, 0.99).high, 368); // 0.99^368 = 0.02476: the largest value
  const width = (n: number): number => {
    const r = intervalRanks(n, 0.99);
    assert.ok(r.low !== null && r.high !== null);
    return (r.high - r.low) / n;
  };
  assert.ok(width(30_000) < width(3_000) && width(3_000) < width(400));
  assert.throws(() => intervalRanks(0, 0.5), RangeError);
  assert.throws(() => intervalRanks(10, 1), RangeError);
});

test('summary percentiles: ci95 for p1…p99, each bound around its estimate; p99.9 from 3,688 values', () => {
  const few = percentileConfidence(ranks(300));
  assert.deepEqual(Object.keys(few.ci95), ['p1', 'p5', 'p10', 'p25', 'p50', 'p75', 'p90', 'p95', 'p99']);
  assert.equal(few.p999, undefined);
  assert.equal(few.ci95.p99?.high, null);
  assert.equal(few.ci95.p1?.low, null);
  const stats = computeStats(ranks(300));
  for (const [key, ci] of Object.entries(few.ci95)) {
    const value = stats?.[key as 'p50'] as number;
    assert.ok(
      (ci.low ?? -Infinity) <= value && value <= (ci.high ?? Infinity),
      `${key} ${value} in ${ci.low}…${ci.high}`,
    );
  }
  assert.equal(P999_MIN_COUNT, 3688); // 0.999^3688 = 0.02498 ≤ 2.5 % < 0.999^3687 = 0.025001
  assert.equal(percentileConfidence(ranks(3687)).p999, undefined);
  const many = percentileConfidence(ranks(3688));
  close(many.p999 as number, percentileSorted(ranks(3688), 99.9));
  assert.equal(many.ci95.p999?.high, 3688);
});
