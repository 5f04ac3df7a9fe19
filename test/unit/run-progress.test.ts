import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ProcessedRecord } from '../../src/record/types.js';
import { formatFinalProgress, formatProgress, startProgress } from '../../src/run/progress.js';

const base = { inFlight: 2, errors: 1, ratePerS: 3.25, lagP50Ms: 0.42, replay: null };

test('a frame names done/total, in flight, errors, rate and send lag', () => {
  assert.equal(
    formatProgress({ ...base, done: 5, total: 10 }),
    'done 5/10 | in flight 2 | errors 1 | 3.3 req/s | lag p50 0.42 ms',
  );
  assert.equal(
    formatProgress({ ...base, done: 7, total: null, inFlight: 0, errors: 0, ratePerS: 0, lagP50Ms: null }),
    'done 7 | in flight 0 | errors 0 | 0.0 req/s | lag p50 -',
  );
});

test('a replay whose total is unknown shows rows read and sessions, never a made-up total', () => {
  const s = { ...base, done: 1180, total: null, replay: { rowsRead: 1204, sessions: 310 } };
  assert.equal(
    formatProgress(s),
    'rows read 1,204 | sessions 310 | done 1,180 | in flight 2 | errors 1 | 3.3 req/s | lag p50 0.42 ms',
  );
  assert.equal(
    formatFinalProgress({ ...s, done: 1204, inFlight: 0, errors: 3 }),
    'finished: rows read 1,204 | sessions 310 | done 1,204 | ok 1,201 | errors 3 | in flight 0',
  );
});

test('--ui none prints nothing however many records arrive', () => {
  const lines: string[] = [];
  const p = startProgress('none', { info: (m) => lines.push(m), warn: (m) => lines.push(m) }, { total: 3 });
  p.onSend();
  p.onRecord({ valid: false, metrics: {}, raw: {} } as unknown as ProcessedRecord);
  p.stop();
  assert.deepEqual(lines, []);
});
