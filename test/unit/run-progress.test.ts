import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProcessedRecord } from '../../src/record/types.js';
import { formatProgress, startProgress } from '../../src/run/progress.js';

test('progress line names done/total, in flight, errors, rate and send lag', () => {
  assert.equal(
    formatProgress({ done: 5, total: 10, inFlight: 2, errors: 1, ratePerS: 3.25, lagP50Ms: 0.42 }),
    'progress: 5/10 requests done, 2 in flight, 1 errors, 3.3 req/s, send lag p50 0.42 ms',
  );
  assert.equal(
    formatProgress({ done: 7, total: null, inFlight: 0, errors: 0, ratePerS: 0, lagP50Ms: null }),
    'progress: 7 requests done, 0 in flight, 0 errors, 0.0 req/s',
  );
});

test('--ui none prints nothing however many records arrive', () => {
  const lines: string[] = [];
  const p = startProgress('none', { info: (m) => lines.push(m), warn: (m) => lines.push(m) }, 3);
  p.onSend();
  p.onRecord({ valid: false, metrics: {}, raw: {} } as unknown as ProcessedRecord);
  p.stop();
  assert.deepEqual(lines, []);
});
