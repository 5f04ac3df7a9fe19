/**
 * Time-slice assignment at window boundaries (metrics/timeslices.ts, the functions the run's
 * `--slice-duration` uses): a request starting exactly on a boundary opens the next window, one a
 * nanosecond before it stays in the previous one; windows without requests are left out and the
 * remaining slices numbered in time order; the last window is cut at the run's end; failed requests
 * count in their slice; rates are over the window.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sliceIndexOf, TimesliceBuilder } from '../../src/metrics/timeslices.js';
import { sampleRecord } from '../helpers/sample-record.js';

const S = 1_000_000_000;

test('sliceIndexOf: a start on a boundary opens the next window; one ns before stays in the previous', () => {
  assert.equal(sliceIndexOf(500, 500, S), 0);
  assert.equal(sliceIndexOf(500 + S - 1, 500, S), 0);
  assert.equal(sliceIndexOf(500 + S, 500, S), 1);
  assert.equal(sliceIndexOf(500 + 3 * S - 1, 500, S), 2);
  assert.equal(sliceIndexOf(499, 500, S), -1);
  // A fractional slice length (--slice-duration 0.25).
  assert.equal(sliceIndexOf(250_000_000, 0, 250_000_000), 1);
  assert.equal(sliceIndexOf(249_999_999, 0, 250_000_000), 0);
});

function at(startNs: number, endNs: number, failed = false) {
  const record = sampleRecord({
    startNs,
    endNs,
    sentNs: null,
    ackNs: null,
    streamEndNs: null,
    ...(failed
      ? {
          error: {
            kind: 'http_status',
            code: 500,
            type: 'Internal Server Error',
            message: 'x',
            failedAtNs: endNs,
          },
        }
      : {}),
  });
  record.valid = !failed;
  return record;
}

test('TimesliceBuilder: records by start at the boundaries, empty windows left out, last window cut at the run end', () => {
  const origin = 7_000;
  const b = new TimesliceBuilder({ sliceNs: S, originNs: origin });
  b.add(at(origin, origin + 10));
  b.add(at(origin + S - 1, origin + S + 400)); // ends in window 1, started in window 0
  b.add(at(origin + S, origin + S + 5)); // exactly on the boundary
  b.add(at(origin + 3 * S + 100, origin + 3 * S + 600_000_000, true));
  const slices = b.build();
  assert.deepEqual(
    slices.map((s) => [s.index, s.gridIndex, s.startNs, s.endNs, s.isComplete]),
    [
      [0, 0, origin, origin + S, true],
      [1, 1, origin + S, origin + 2 * S, true],
      [2, 3, origin + 3 * S, origin + 3 * S + 600_000_000, false],
    ],
  );
  assert.deepEqual(
    slices.map((s) => [s.summary.metrics.request_count?.avg, s.summary.metrics.error_request_count?.avg]),
    [
      [2, 0],
      [1, 0],
      [0, 1],
    ],
  );
  assert.deepEqual(
    slices[2]?.summary.errorSummary.map((e) => [e.code, e.count]),
    [[500, 1]],
  );
  // Rates over the window: 2 requests in a 1 s window; the cut window lasts 0.6 s.
  assert.equal(slices[0]?.summary.metrics.request_throughput?.avg, 2);
  assert.equal(slices[0]?.summary.metrics.benchmark_duration?.avg, 1);
  assert.equal(slices[2]?.summary.metrics.benchmark_duration?.avg, 0.6);
});

test('TimesliceBuilder: no records, no slices; a record before the origin is refused', () => {
  assert.deepEqual(new TimesliceBuilder({ sliceNs: S, originNs: 0 }).build(), []);
  const b = new TimesliceBuilder({ sliceNs: S, originNs: 10 });
  assert.throws(() => b.add(at(9, 20)), RangeError);
  assert.throws(() => new TimesliceBuilder({ sliceNs: 0, originNs: 0 }), RangeError);
});
