/**
 * `--workers auto`'s decision (run/workers-auto.ts) through its exported functions: the demand a
 * run states, one thread's capacity (a calibration file, or the stated defaults), and the count,
 * never more than cores − 1 and single-process on a 1–2 core machine or with a prefill gate.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { planRun } from '../../src/config/plan.js';
import { profileConfig } from '../../src/config/schema.js';
import type { Dataset } from '../../src/dataset/types.js';
import {
  chooseWorkers,
  DEFAULT_THREAD_RATE_PER_S,
  DEFAULT_THREAD_STREAMS,
  perThreadOf,
  resolveWorkers,
} from '../../src/run/workers-auto.js';

const NO_DATASET: Dataset = {
  conversations: [],
  turnCount: 0,
  blockSize: 16,
  skipped: { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 },
  file: '',
};

/** A calibration path that does not exist: the defaults apply. */
const NOWHERE = join(tmpdir(), 'tokenload-no-such-dir', 'calibration.json');

function plan(over: Partial<ProfileConfigInput>) {
  return planRun(profileConfig({ models: ['m'], streaming: true, workers: 'auto', ...over }));
}

async function resolve(over: Partial<ProfileConfigInput>, cores: number, calibrationPath = NOWHERE) {
  const warnings: string[] = [];
  const choice = await resolveWorkers(plan(over), NO_DATASET, false, { cores, calibrationPath }, (m) =>
    warnings.push(m),
  );
  return { choice, warnings };
}

test('a number given is kept: nothing is chosen', async () => {
  const choice = await resolveWorkers(
    planRun(profileConfig({ models: ['m'], workers: 3 })),
    NO_DATASET,
    false,
    { cores: 8, calibrationPath: NOWHERE },
    () => undefined,
  );
  assert.equal(choice, null);
});

test('without a calibration a rate is split by the default per-thread rate, rounded up', async () => {
  const { choice } = await resolve({ requestRate: 2.5 * DEFAULT_THREAD_RATE_PER_S }, 8);
  assert.equal(choice?.workers, 3);
  assert.deepEqual(choice?.per_thread, {
    value: DEFAULT_THREAD_RATE_PER_S,
    source: 'default, no calibration',
  });
  const small = await resolve({ requestRate: DEFAULT_THREAD_RATE_PER_S }, 8);
  assert.equal(small.choice?.workers, 1);
  assert.match(small.choice?.basis ?? '', /^1 \(single-process\): one thread carries/);
});

test('a 1–2 core machine stays single-process even when one thread cannot hold the load, and says so', async () => {
  for (const cores of [1, 2]) {
    const { choice } = await resolve({ requestRate: 10 * DEFAULT_THREAD_RATE_PER_S }, cores);
    assert.equal(choice?.workers, 1);
    assert.match(
      choice?.basis ?? '',
      /needs 10 threads, but .* none to spare beside the main thread; expect a saturated client/,
    );
  }
});

test('never more than cores − 1 worker threads', async () => {
  const { choice } = await resolve({ requestRate: 100 * DEFAULT_THREAD_RATE_PER_S }, 4);
  assert.equal(choice?.workers, 3);
  assert.match(choice?.basis ?? '', /needs 100, capped at 3 \(cores − 1/);
});

test('--concurrency is sized in streams per thread', async () => {
  const { choice } = await resolve({ concurrency: 2 * DEFAULT_THREAD_STREAMS + 1 }, 8);
  assert.deepEqual(choice?.demand, {
    value: 2 * DEFAULT_THREAD_STREAMS + 1,
    unit: 'streams',
    source: '--concurrency',
  });
  assert.equal(choice?.workers, 3);
});

test('a prefill gate keeps the run single-process (its first token is seen on the main thread)', async () => {
  const { choice } = await resolve({ concurrency: 50_000, prefillConcurrency: 4, requestCount: 10 }, 8);
  assert.equal(choice?.workers, 1);
  assert.match(choice?.basis ?? '', /--prefill-concurrency/);
});

test('a streamed trace, whose rate is unknown before it is read: single-process, saying so', () => {
  const choice = chooseWorkers({ cores: 8, demand: null, per_thread: null, singleOnly: null });
  assert.equal(choice.workers, 1);
  assert.match(choice.basis, /streamed trace .* pass --workers N/);
});

test('a calibration file gives the per-thread figure: its ceiling over the workers it ran with', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-unit-'));
  const path = join(dir, 'calibration.json');
  const file = {
    schemaVersion: 2,
    measuredAt: 'then',
    workers: 2,
    maxRequestRatePerS: 1600,
    concurrentStreams: null,
    rateSteps: [{ target: 50 }],
    streamSteps: [{ target: 50 }],
  };
  writeFileSync(path, JSON.stringify(file));
  const { choice } = await resolve({ requestRate: 2000 }, 8, path);
  assert.deepEqual(choice?.per_thread, {
    value: 800,
    source: 'tokenload calibrate, then: 1600 req/s over its 2 workers',
  });
  assert.equal(choice?.workers, 3);
  // A ceiling below the lowest step: that step bounds it.
  const streams = await resolve({ concurrency: 100 }, 8, path);
  assert.deepEqual(streams.choice?.per_thread, {
    value: 25,
    source: 'tokenload calibrate, then: below 50 streams over its 2 workers',
  });
  assert.equal(streams.choice?.workers, 4);
});

test('a schema-1 calibration (judged against a fixed 2 ms) is not used; an unreadable one is skipped with a warning', async () => {
  const old = { schemaVersion: 1, measuredAt: 'then', maxRequestRatePerS: 10, rateSteps: [{ target: 50 }] };
  assert.equal(perThreadOf(old, 'req/s').source, 'default, no calibration');
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-workers-bad-'));
  const path = join(dir, 'calibration.json');
  writeFileSync(path, 'not json');
  const { choice, warnings } = await resolve({ requestRate: 100 }, 8, path);
  assert.equal(choice?.per_thread?.source, 'default, no calibration');
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /not JSON/);
});
