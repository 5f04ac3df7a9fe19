import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { ConfigError } from '../../src/errors.js';
import { createIntervals } from '../../src/timing/arrivals.js';
import { createConcurrency } from '../../src/timing/concurrency.js';
import { createStrategy } from '../../src/timing/registry.js';
import { createRequestRate } from '../../src/timing/request-rate.js';
import { cyclingSource } from '../../src/timing/session-source.js';
import type { DispatchItem, LoadStrategy, StrategyReport } from '../../src/timing/types.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

const MS = 1e6;

function turn(index: number, delayMs?: number): Turn {
  return {
    index,
    ...(delayMs === undefined ? {} : { delayMs }),
    prompt: { kind: 'text', text: 'x' },
    source: { file: 'mem', line: 1 },
  };
}

function sessions(n: number, turns = 1, delayMs?: number): Conversation[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    turns: Array.from({ length: turns }, (_, k) => turn(k, k > 0 ? delayMs : undefined)),
    contextMode: 'deltas_without_responses' as const,
  }));
}

interface Sent {
  id: string;
  turn: number;
  sentMs: number;
  doneMs: number;
  scheduledMs: number | null;
  /** The wait the session cap imposed, as the strategy handed it to the send; undefined without a cap. */
  capWaitMs: number | undefined;
}

async function run<R extends StrategyReport>(
  strategy: LoadStrategy<R>,
  durationMs: number,
): Promise<{ sent: Sent[]; maxInFlight: number; report: R }> {
  const clock = new VirtualClock(0);
  const sent: Sent[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const dispatch = {
    prepare: (item: DispatchItem) => ({
      send: async (_scheduledNs?: number, capWaitNs?: number) => {
        const at = clock.nowNs();
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await clock.sleepUntil(at + durationMs * MS);
        inFlight--;
        sent.push({
          id: item.conversation.id,
          turn: item.turn.index,
          sentMs: at / MS,
          doneMs: clock.nowNs() / MS,
          scheduledMs: item.scheduledNs === null ? null : item.scheduledNs / MS,
          capWaitMs: capWaitNs === undefined ? undefined : capWaitNs / MS,
        });
      },
    }),
  };
  const done = strategy.run({ conversations: [], clock, dispatch, signal: new AbortController().signal });
  await clock.runUntilIdle(done);
  const report = await done;
  return { sent: sent.sort((a, b) => a.sentMs - b.sentMs), maxInFlight, report };
}

const inOrder = (n: number) => () => Array.from({ length: n }, (_, i) => i);

test('concurrency N keeps exactly N requests in flight and stops at the request count', async () => {
  const convs = sessions(3);
  const strategy = createConcurrency({
    concurrency: 4,
    source: cyclingSource(convs, inOrder(3)),
    stop: { requestCount: 10 },
  });
  const { sent, maxInFlight } = await run(strategy, 100);
  assert.equal(sent.length, 10);
  assert.equal(maxInFlight, 4);
  // closed loop: 4 at t=0, 4 at t=100, 2 at t=200
  assert.deepEqual(
    sent.map((s) => s.sentMs),
    [0, 0, 0, 0, 100, 100, 100, 100, 200, 200],
  );
});

test('concurrency holds a slot for the whole session, turns spaced by their delay', async () => {
  const strategy = createConcurrency({
    concurrency: 1,
    source: cyclingSource(sessions(2, 2, 30), inOrder(2), 1),
    stop: {},
  });
  const { sent } = await run(strategy, 10);
  assert.deepEqual(
    sent.map((s) => [s.id, s.turn, s.sentMs]),
    [
      ['s0', 0, 0],
      ['s0', 1, 40],
      ['s1', 0, 50],
      ['s1', 1, 90],
    ],
  );
});

test('constant request rate sends on an absolute grid and stops at the duration', async () => {
  const strategy = createRequestRate({
    ratePerS: 100,
    intervals: createIntervals('constant', 100, 1),
    source: cyclingSource(sessions(5), inOrder(5)),
    stop: { durationNs: 95 * MS },
  });
  const { sent, report } = await run(strategy, 250);
  assert.deepEqual(
    sent.map((s) => s.sentMs),
    [0, 10, 20, 30, 40, 50, 60, 70, 80, 90],
  );
  for (const s of sent) assert.equal(s.scheduledMs, s.sentMs);
  assert.ok(Math.abs(report.pacing.achievedRatePerS - 100) < 1e-9);
});

test('rate + concurrency: sleep-then-gate delays arrivals until a slot frees, nothing dropped', async () => {
  const strategy = createRequestRate({
    ratePerS: 100,
    intervals: createIntervals('constant', 100, 1),
    source: cyclingSource(sessions(4), inOrder(4), 1),
    stop: {},
    concurrency: 2,
  });
  const { sent, maxInFlight } = await run(strategy, 25);
  assert.equal(maxInFlight, 2);
  assert.equal(sent.length, 4);
  // ticks at 0,10 go out; tick 20 waits for the slot freed at 25; next tick 30 waits for 35
  assert.deepEqual(
    sent.map((s) => s.sentMs),
    [0, 10, 25, 35],
  );
});

test('rate 20/s + concurrency 1 against 100 ms requests: every tick keeps its time, the backlog grows, the wait is the cap’s', async () => {
  const strategy = createRequestRate({
    ratePerS: 20,
    intervals: createIntervals('constant', 20, 1),
    source: cyclingSource(sessions(12), inOrder(12), 1),
    stop: {},
    concurrency: 1,
  });
  const { sent, report } = await run(strategy, 100);
  assert.equal(sent.length, 12);
  assert.equal(report.pacing.reanchors, 0);
  assert.equal(report.pacing.skippedArrivals, 0);
  // tick k is due at 50k ms and goes out when the slot frees at 100k ms: it queued 50k ms for the cap
  assert.deepEqual(
    sent.map((s) => [s.scheduledMs, s.sentMs, s.capWaitMs]),
    sent.map((_, k) => [50 * k, 100 * k, 50 * k]),
  );
});

test('rate + concurrency: a client stall still re-anchors and counts what it skipped; a cap wait does not', async () => {
  // The cap holds tick 1 (due at 10 ms) until the first request ends at 40 ms; the backlog drains by
  // 50 ms (later requests take 1 ms); the loop's sleep until the 100 ms tick then stalls to 340 ms.
  const clock = new StallingClock(100, 340);
  const strategy = createRequestRate({
    ratePerS: 100,
    intervals: createIntervals('constant', 100, 1),
    source: cyclingSource(sessions(5), inOrder(5)),
    stop: { durationNs: 1000 * MS },
    concurrency: 1,
  });
  const waits: number[] = [];
  const dispatch = {
    prepare: () => ({
      send: async (_s?: number, capWaitNs?: number) => {
        waits.push((capWaitNs ?? Number.NaN) / MS);
        await clock.sleepUntil(clock.nowNs() + (waits.length === 1 ? 40 : 1) * MS);
      },
    }),
  };
  const done = strategy.run({ conversations: [], clock, dispatch, signal: new AbortController().signal });
  await clock.runUntilIdle(done);
  const report = (await done).pacing;
  assert.equal(report.reanchors, 1);
  assert.ok(Math.abs(report.skippedArrivals - 24) <= 1, `skipped ${report.skippedArrivals}`);
  assert.deepEqual(waits.slice(0, 3), [0, 30, 21]);
  assert.ok(Math.abs(waits.length - (100 - 24)) <= 1, `sent ${waits.length}`);
});

test('multi-turn sessions under a rate: a continuation takes the first tick after it is ready', async () => {
  const strategy = createRequestRate({
    ratePerS: 100,
    intervals: createIntervals('constant', 100, 1),
    source: cyclingSource(sessions(1, 2, 0), inOrder(1), 1),
    stop: {},
  });
  const { sent } = await run(strategy, 15);
  assert.deepEqual(
    sent.map((s) => [s.turn, s.sentMs]),
    [
      [0, 0],
      [1, 20],
    ],
  );
});

test('poisson and gamma intervals have mean 1/rate and are reproducible from the seed', () => {
  for (const [pattern, shape] of [
    ['poisson', 1],
    ['gamma', 0.5],
    ['gamma', 4],
  ] as const) {
    const a = createIntervals(pattern, 1000, 3, shape);
    const b = createIntervals(pattern, 1000, 3, shape);
    let sum = 0;
    const n = 20000;
    for (let i = 0; i < n; i++) {
      const x = a();
      assert.equal(x, b());
      sum += x;
    }
    const meanMs = sum / n / MS;
    assert.ok(Math.abs(meanMs - 1) < 0.05, `${pattern}(${shape}) mean ${meanMs} ms`);
  }
  assert.throws(() => createIntervals('constant', 0, 1), ConfigError);
});

/** A virtual clock whose first sleep ending in [stallAtMs, resumeAtMs) ends at resumeAtMs instead (a stall). */
class StallingClock extends VirtualClock {
  private stalled = false;
  constructor(
    private readonly stallAtMs: number,
    private readonly resumeAtMs: number,
  ) {
    super(0);
  }
  override sleepUntil(targetNs: number, signal?: AbortSignal): Promise<void> {
    const inWindow = targetNs >= this.stallAtMs * MS && targetNs < this.resumeAtMs * MS;
    if (!inWindow || this.stalled) return super.sleepUntil(targetNs, signal);
    this.stalled = true;
    return super.sleepUntil(this.resumeAtMs * MS, signal);
  }
}

test('request rate: a stall under the catch-up bound is caught up; a longer one re-anchors and counts what it skipped', async () => {
  for (const [stallMs, reanchors, skipped] of [
    [60, 0, 0],
    [300, 1, 30],
  ] as const) {
    const clock = new StallingClock(200, 200 + stallMs);
    const strategy = createRequestRate({
      ratePerS: 100,
      intervals: createIntervals('constant', 100, 1),
      source: cyclingSource(sessions(5), inOrder(5)),
      stop: { durationNs: 995 * MS },
    });
    let sent = 0;
    const dispatch = { prepare: () => ({ send: async () => void sent++ }) };
    const done = strategy.run({ conversations: [], clock, dispatch, signal: new AbortController().signal });
    await clock.runUntilIdle(done);
    const report = (await done).pacing;
    assert.equal(report.reanchors, reanchors, `stall ${stallMs} ms`);
    assert.ok(Math.abs(report.skippedArrivals - skipped) <= 1, `skipped ${report.skippedArrivals}`);
    assert.ok(Math.abs(sent - (100 - skipped)) <= 1, `sent ${sent} after a ${stallMs} ms stall`);
  }
});

/** A `--request-rate-series` strategy from the registry, as a run builds it (constant arrivals). */
function seriesStrategy(points: Array<{ time_s: number; qps: number }>, stop: { durationNs?: number }) {
  return createStrategy({
    kind: 'request_rate',
    source: cyclingSource(sessions(4), inOrder(4)),
    stop,
    rate: { ratePerS: 1, pattern: 'constant', smoothness: 1, seed: 1, series: { file: 'mem.json', points } },
  });
}

/** Ticks scheduled in each whole second [s, s + 1). */
function perSecond(sent: readonly Sent[], seconds: number): number[] {
  const counts = Array.from({ length: seconds }, () => 0);
  for (const s of sent) {
    const second = Math.floor((s.scheduledMs ?? Number.NaN) / 1000);
    counts[second] = (counts[second] ?? 0) + 1;
  }
  return counts;
}

test('rate series: each second gets the integral of the series over it (10/s rising to 40/s at 3 s, then 40/s)', async () => {
  const { sent, report } = await run(
    seriesStrategy(
      [
        { time_s: 0, qps: 10 },
        { time_s: 3, qps: 40 },
        { time_s: 5, qps: 40 },
      ],
      { durationNs: 5e9 },
    ),
    1,
  );
  // The rate is 10 + 10·t up to 3 s: its integral over the seconds is 15, 25, 35, then 40 and 40.
  const expected = [15, 25, 35, 40, 40];
  perSecond(sent, 5).forEach((n, s) => {
    assert.ok(Math.abs(n - (expected[s] as number)) <= 1, `second ${s}: ${n} sent, ${expected[s]} expected`);
  });
  assert.ok(Math.abs(report.issued - 155) <= 1, `${report.issued} issued of 155`);
  assert.ok(sent.every((s) => s.sentMs === s.scheduledMs));
});

test('rate series: a stretch at 0 req/s sends nothing and divides by nothing; a series ending at 0 ends the run', async () => {
  // 20/s, down to 0 by 1.5 s, nothing until 3 s, back to 20/s at 3.5 s, down to 0 at 5 s and held.
  const points = [
    { time_s: 0, qps: 20 },
    { time_s: 1, qps: 20 },
    { time_s: 1.5, qps: 0 },
    { time_s: 3, qps: 0 },
    { time_s: 3.5, qps: 20 },
    { time_s: 4, qps: 20 },
    { time_s: 5, qps: 0 },
  ];
  const { sent, report } = await run(seriesStrategy(points, {}), 1);
  const at = sent.map((s) => s.scheduledMs ?? Number.NaN);
  assert.ok(at.every(Number.isFinite));
  assert.deepEqual(
    at.filter((t) => t > 1500 && t <= 3000),
    [],
  );
  // 20 + 5 before the gap, 5 + 10 + 10 after it: 50 arrivals, the last one at most at 5 s.
  assert.ok(Math.abs(report.issued - 50) <= 1, `${report.issued} issued of 50`);
  assert.ok(Math.max(...at) <= 5000);
  assert.equal(report.stopped, false);
});

test('rate series: a series that starts at 0 sends its first request when the rate turns positive', async () => {
  const { sent } = await run(
    seriesStrategy(
      [
        { time_s: 0, qps: 0 },
        { time_s: 1, qps: 0 },
        { time_s: 2, qps: 10 },
      ],
      { durationNs: 3e9 },
    ),
    1,
  );
  // The first at 1 s; 5 in the rising second, 10 in the last.
  assert.equal(sent[0]?.scheduledMs, 1000);
  const counts = perSecond(sent, 3);
  assert.equal(counts[0], 0);
  assert.ok(
    Math.abs((counts[1] as number) - 5) <= 1 && Math.abs((counts[2] as number) - 10) <= 1,
    String(counts),
  );
});
