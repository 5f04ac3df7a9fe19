/**
 * `tokenload calibrate` judges each step against the floor that step measured, and a ceiling below
 * its lowest step is never read as "0 req/s": the step judgement with a fake floor, the printed
 * table, and the warning `profile` prints from a calibration file of either schema.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { calibrationTable, judgeStep, RATE_LAG_MARGIN_MS } from '../../src/cli/calibrate-action.js';
import { type Calibration, type CalibrationStep, rateWarning } from '../../src/health/calibration-file.js';

/** Floors as a step run measures them: this VM's, and a quiet machine's. */
const vm = {
  wake_floor_ms: { p50: 0.01, p99: 2.5, max: 3, count: 250 },
  idle_loop_delay_ms: { p50: 2, p99: 3.8, max: 4 },
  event_loop_delay_ms: { p50: 2.1, p99: 5.9, max: 8 },
};
const quiet = { ...vm, wake_floor_ms: { p50: 0.01, p99: 0.3, max: 0.5, count: 250 } };

test("a 50 req/s step that misses 2 ms only by this VM's floor passes; on a quiet machine it fails", () => {
  assert.deepEqual(judgeStep('rate', vm, 3.1, 0), { pass: true, limitMs: 2.5 + RATE_LAG_MARGIN_MS });
  assert.equal(judgeStep('rate', quiet, 3.1, 0).pass, false);
  assert.equal(judgeStep('rate', vm, 3.1, 1).pass, false, 'a step with errors fails');
  assert.equal(judgeStep('rate', vm, null, 0).pass, false, 'a rate step without send lag fails');
  // Streams: loop delay p99 5.9 ms against the idle loop's 3.8 + 10.
  assert.deepEqual(judgeStep('streams', vm, null, 0), { pass: true, limitMs: 13.8 });
});

function failedStep(target: number): CalibrationStep {
  return {
    target,
    achieved: target,
    lagP99Ms: 9,
    loopDelayP99Ms: 6,
    wakeFloorP99Ms: 1,
    idleLoopDelayP99Ms: 3,
    limitMs: 3,
    eventsPerS: 0,
    errors: 0,
    pass: false,
  };
}

/** A calibration in which no step passed. */
const nothingPassed: Calibration = {
  schemaVersion: 2,
  measuredAt: '2026-12-01T00:00:00.000Z',
  node: 'v20',
  cpus: 2,
  workers: 1,
  maxRequestRatePerS: null,
  concurrentStreams: null,
  sseEventsPerS: null,
  rateSteps: [failedStep(50)],
  streamSteps: [failedStep(50)],
};

test('a calibration in which no step passed prints "below the lowest step", never 0', () => {
  const text = calibrationTable(nothingPassed);
  assert.match(
    text,
    /^Max request rate \(send lag p99 ≤ wake floor p99 \+ 2 ms\): below the lowest step \(50 req\/s\)$/m,
  );
  assert.match(text, /^Concurrent streams .*: below the lowest step \(50\)$/m);
  assert.doesNotMatch(text, /: 0 req\/s/);
});

test('profile warns from a calibration only at rates it did not sustain, never "exceeds 0 req/s"', () => {
  const path = '/home/u/.cache/tokenload/calibration.json';
  assert.equal(rateWarning(null, 100, path), null);
  // Below the lowest step: no ceiling to compare rates under 50 with; from 50 up, says so.
  assert.equal(rateWarning(nothingPassed, 20, path), null);
  const below = rateWarning(nothingPassed, 100, path) ?? '';
  assert.match(below, /^--request-rate 100: this machine's rate ceiling is below 50 req\/s, the lowest step/);
  assert.match(below, /calibration\.json/);
  // A ceiling that was measured: warns above it only.
  const measured = { ...nothingPassed, maxRequestRatePerS: 400 };
  assert.equal(rateWarning(measured, 400, path), null);
  assert.match(rateWarning(measured, 800, path) ?? '', /^--request-rate 800 exceeds the 400 req\/s/);
  // Schema 1 judged against a fixed 2 ms and saved 0 on this VM: not used, asks for a new calibration.
  const legacy = {
    schemaVersion: 1,
    measuredAt: '2026-11-29',
    maxRequestRatePerS: 0,
    rateSteps: [{ target: 50 }],
  };
  const stale = rateWarning(legacy, 100, path) ?? '';
  assert.match(stale, /rerun tokenload calibrate$/);
  assert.doesNotMatch(stale, /exceeds 0/);
  assert.equal(rateWarning({ ...legacy, maxRequestRatePerS: 200 }, 100, path), null);
});
