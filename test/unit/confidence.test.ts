/**
 * Student's t critical values and the across-runs statistics of `--num-profile-runs`, against the
 * values printed in any t table (NIST/SEMATECH e-Handbook, Table of Student's t critical values).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { acrossRuns, studentTQuantile } from '../../src/metrics/confidence.js';

test('t critical values match the table', () => {
  const table: Array<[number, number, string]> = [
    [0.975, 1, '12.706'],
    [0.975, 4, '2.776'],
    [0.975, 9, '2.262'],
    [0.995, 4, '4.604'],
    [0.95, 2, '2.920'],
    [0.975, 100, '1.984'],
  ];
  for (const [p, df, expected] of table)
    assert.equal(studentTQuantile(p, df).toFixed(3), expected, `p ${p}, df ${df}`);
});

test('AIPerf’s worked example (multi-run-confidence tutorial): TTFT p99 over 5 runs', () => {
  const s = acrossRuns([150, 152, 148, 155, 151], 0.95, 'ms');
  assert.equal(s.mean, 151.2);
  assert.equal(s.min, 148);
  assert.equal(s.max, 155);
  assert.equal(s.t_critical.toFixed(3), '2.776');
  // The tutorial's std ≈ 2.59, SE ≈ 1.16, CV ≈ 0.017 and 95 % CI [148.0, 154.4].
  assert.equal(s.std.toFixed(2), '2.59');
  assert.equal(s.se.toFixed(2), '1.16');
  assert.equal(s.cv?.toFixed(3), '0.017');
  assert.deepEqual([s.ci_low.toFixed(1), s.ci_high.toFixed(1)], ['148.0', '154.4']);
  assert.equal(s.unit, 'ms');
  assert.equal(acrossRuns([0, 0], 0.95, 'requests').cv, null);
  assert.throws(() => acrossRuns([1], 0.95, 'ms'), RangeError);
});
