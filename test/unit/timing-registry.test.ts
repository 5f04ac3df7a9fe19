/**
 * The run picks its load strategy by name from the registry (`buildStrategy` → `createStrategy`),
 * each strategy's report says which one ran, and bad rate settings are configuration errors that
 * name their flag.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { planRun } from '../../src/config/plan.js';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import type { Conversation, Dataset } from '../../src/dataset/types.js';
import { ConfigError } from '../../src/errors.js';
import { buildStrategy, profilingLimits, warmupLimits } from '../../src/run/strategy-factory.js';
import type { DispatchItem } from '../../src/timing/types.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

/** Three single-turn sessions with trace timestamps 0, 10 and 20 ms. */
function dataset(): Dataset {
  const conversations: Conversation[] = [0, 1, 2].map((i) => ({
    id: `s${i}`,
    contextMode: 'deltas_without_responses',
    turns: [
      {
        index: 0,
        timestampMs: 10 * i,
        prompt: { kind: 'text', text: 'x' },
        source: { file: 'mem', line: i },
      },
    ],
  }));
  return {
    conversations,
    turnCount: 3,
    blockSize: 16,
    skipped: { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 },
    file: 'mem',
  };
}

/** A timestamped trace input (the dataset itself is built in memory above). */
const TRACE = { inputFile: 'mem.jsonl', customDatasetType: 'bailian_trace' } as const;

function config(overrides: Partial<ProfileConfig>): ProfileConfig {
  return profileConfig({ models: ['m'], randomSeed: 3, requestCount: 6, ...overrides });
}

/** Runs the phase's strategy on a virtual clock with instant requests; returns its report and the sends. */
async function runPhaseStrategy(asked: ProfileConfig, phase: 'warmup' | 'profiling') {
  const cfg = planRun(asked);
  const data = dataset();
  const limits = phase === 'warmup' ? warmupLimits(cfg) : profilingLimits(cfg, data);
  assert.ok(limits !== null);
  const strategy = buildStrategy(cfg, data, limits, phase);
  const clock = new VirtualClock(0);
  const sent: DispatchItem[] = [];
  const dispatch = { prepare: (item: DispatchItem) => ({ send: async () => void sent.push(item) }) };
  const done = strategy.run({
    conversations: data.conversations,
    clock,
    dispatch,
    signal: new AbortController().signal,
  });
  await clock.runUntilIdle(done);
  return { name: strategy.name, report: await done, sent };
}

test('the run builds the configured strategy from the registry; its report is of that kind and counts what it sent', async () => {
  for (const [overrides, phase, expected] of [
    [{ ...TRACE, fixedSchedule: true }, 'profiling', 'fixed_schedule'],
    [{ ...TRACE, fixedSchedule: true, warmupRequestCount: 4 }, 'warmup', 'concurrency'],
    [{ requestRate: 100, arrivalPattern: 'constant' }, 'profiling', 'request_rate'],
    [{ concurrency: 2 }, 'profiling', 'concurrency'],
  ] as const) {
    const { name, report, sent } = await runPhaseStrategy(config(overrides), phase);
    assert.equal(name, expected, JSON.stringify(overrides));
    assert.equal(report.kind, expected);
    assert.equal(report.issued, sent.length);
    if (report.kind === 'fixed_schedule') assert.equal(report.replay.rowsRead, dataset().turnCount);
    if (report.kind === 'request_rate') assert.ok(report.pacing.achievedRatePerS > 0);
  }
});

test('a request rate or gamma smoothness that is not > 0 is a ConfigError naming its flag', () => {
  const data = dataset();
  for (const [overrides, flag] of [
    [{ requestRate: 0 }, '--request-rate'],
    [{ requestRate: -5, arrivalPattern: 'constant' }, '--request-rate'],
    [{ requestRate: 10, arrivalPattern: 'gamma', arrivalSmoothness: 0 }, '--arrival-smoothness'],
  ] as const) {
    const isNamed = (err: unknown) => err instanceof ConfigError && err.option === flag && err.exitCode === 2;
    // The configuration schema refuses it first ...
    assert.throws(() => config(overrides), isNamed, JSON.stringify(overrides));
    // ... and a hand-built configuration that skips the schema is still refused by the strategy.
    const cfg = planRun({
      ...config({ requestRate: 10, arrivalPattern: 'gamma', arrivalSmoothness: 1 }),
      ...overrides,
    });
    assert.throws(
      () => buildStrategy(cfg, data, profilingLimits(cfg, data), 'profiling'),
      isNamed,
      JSON.stringify(overrides),
    );
  }
});
