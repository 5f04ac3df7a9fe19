/**
 * MSER-5 (src/metrics/analysis/mser.ts), the truncation the steady-state window of an open-loop run
 * reads, on a recorded series: requests in the system per 50 ms bin of a rate ramped from 4 to 60/s
 * over 3 s and held to 10 s (test/serial/steady-state-ramp.test.ts, a run on a quiet machine whose
 * held part stayed at 6.00 ± 0.02: MSER's minimum then fell on its half-way bound by noise, and the
 * run was called "never settled"), beside series that do keep moving.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MSER_BATCH, mser5 } from '../../src/metrics/analysis/mser.js';

/** The recorded series (200 bins over the arrivals' 10 s). */
const RAMP_THEN_FLAT = [
  1.0, 1.0, 0.087, 0.455, 1.0, 0.634, 1.0, 1.104, 1.0, 1.367, 1.014, 1.506, 1.66, 1.42, 1.578, 1.731, 1.874,
  1.959, 2.048, 2.13, 2.201, 2.261, 2.348, 2.514, 2.674, 2.58, 2.777, 2.909, 2.929, 3.022, 3.179, 3.27, 3.241,
  3.471, 3.539, 3.527, 3.666, 3.78, 3.871, 3.961, 4.085, 4.194, 4.257, 4.326, 4.425, 4.583, 4.629, 4.673,
  4.849, 4.886, 4.986, 5.107, 5.125, 5.334, 5.392, 5.425, 5.552, 5.681, 5.76, 5.867, 5.899, 5.966, 6.028,
  5.963, 6.007, 5.989, 5.997, 6.017, 5.985, 5.991, 5.965, 5.986, 5.985, 6.183, 6.212, 6.275, 6.182, 5.99,
  6.001, 6.063, 5.984, 6.034, 6.032, 5.976, 5.995, 5.969, 6.028, 5.961, 6.02, 5.976, 5.996, 6.008, 6.003,
  5.974, 6.104, 5.995, 5.971, 5.969, 5.964, 5.984, 5.997, 6.0, 6.035, 5.962, 5.956, 5.993, 5.958, 6.037,
  6.004, 5.989, 5.998, 5.998, 6.008, 6.037, 6.025, 6.033, 5.997, 6.0, 5.976, 6.058, 6.013, 5.996, 6.023,
  6.031, 5.98, 6.049, 5.988, 6.024, 5.966, 6.021, 6.021, 6.027, 5.995, 5.971, 5.98, 6.025, 5.995, 6.014,
  5.998, 6.023, 5.998, 5.974, 5.969, 5.989, 6.096, 5.988, 5.998, 5.994, 6.03, 6.027, 6.024, 5.996, 5.991,
  6.048, 6.026, 6.021, 5.992, 5.986, 5.984, 5.988, 5.985, 6.026, 6.019, 6.022, 5.995, 5.99, 5.982, 5.989,
  6.092, 6.003, 6.024, 6.012, 5.994, 5.972, 5.964, 5.97, 6.034, 6.0, 6.009, 5.971, 6.001, 5.959, 5.965, 5.973,
  5.999, 6.026, 6.031, 5.972, 5.97, 5.971, 6.003, 5.962, 5.975, 5.972, 6.022, 5.978, 6.015, 6.022, 5.995,
  5.98,
];

test('a ramp then a tail flat to within noise has settled where it entered the flat band', () => {
  const r = mser5(RAMP_THEN_FLAT);
  assert.equal(r.settled, true);
  // The ramp ends at about batch 12 (60 bins, 3 s); its small overshoot ends by batch 17.
  assert.ok(r.truncate >= 12 * MSER_BATCH && r.truncate <= 18 * MSER_BATCH, `truncate ${r.truncate}`);
});

test('series still moving at the half-way bound are not settled: a line, a square root', () => {
  const line = Array.from({ length: 200 }, (_, i) => 1 + i * 0.05 + Math.sin(i) * 0.01);
  const root = Array.from({ length: 200 }, (_, i) => Math.sqrt(i));
  for (const [name, series] of [
    ['line', line],
    ['root', root],
  ] as const)
    assert.equal(mser5(series).settled, false, name);
});
