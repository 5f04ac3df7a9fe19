/**
 * Request rate: a tick that is sure to start a new session gets that session's request prepared
 * before the clock sleeps until the tick, so building it is not between the tick and the send.
 * Continuations (whose prompt depends on the previous reply) are still prepared at their tick,
 * and a request prepared for a tick that is never issued is never sent.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { createIntervals } from '../../src/timing/arrivals.js';
import { createRequestRate } from '../../src/timing/request-rate.js';
import { cyclingSource } from '../../src/timing/session-source.js';
import type { DispatchItem, LoadStrategy } from '../../src/timing/types.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

const MS = 1e6;

function sessions(n: number, turns: number): Conversation[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    turns: Array.from(
      { length: turns },
      (_, k): Turn => ({ index: k, prompt: { kind: 'text', text: 'x' }, source: { file: 'mem', line: 1 } }),
    ),
    contextMode: 'deltas_without_responses' as const,
  }));
}

interface Event {
  id: string;
  turn: number;
  scheduledMs: number;
  preparedMs: number;
  sentMs: number | null;
}

async function run(strategy: LoadStrategy, serviceMs: number): Promise<Event[]> {
  const clock = new VirtualClock(0);
  const events: Event[] = [];
  const dispatch = {
    prepare: (item: DispatchItem) => {
      const e: Event = {
        id: item.conversation.id,
        turn: item.turn.index,
        scheduledMs: (item.scheduledNs ?? Number.NaN) / MS,
        preparedMs: clock.nowNs() / MS,
        sentMs: null,
      };
      events.push(e);
      return {
        send: async () => {
          e.sentMs = clock.nowNs() / MS;
          await clock.sleepUntil(clock.nowNs() + serviceMs * MS);
        },
      };
    },
  };
  const done = strategy.run({ conversations: [], clock, dispatch, signal: new AbortController().signal });
  await clock.runUntilIdle(done);
  await done;
  return events;
}

const rate100 = (source: Conversation[], stop: { durationNs?: number; requestCount?: number }) =>
  createRequestRate({
    ratePerS: 100,
    intervals: createIntervals('constant', 100, 1),
    source: cyclingSource(source, () => source.map((_, i) => i), 1),
    stop,
  });

test('single-turn sessions are prepared one tick ahead and sent on their tick', async () => {
  const events = await run(rate100(sessions(8, 1), { durationNs: 45 * MS }), 25);
  const sent = events.filter((e) => e.sentMs !== null);
  assert.deepEqual(
    sent.map((e) => e.sentMs),
    [0, 10, 20, 30, 40],
  );
  for (const e of sent) {
    assert.equal(e.scheduledMs, e.sentMs);
    if (e.sentMs !== 0) assert.ok(e.preparedMs < e.scheduledMs, `${e.id} prepared at ${e.preparedMs}`);
  }
  assert.equal(events.length, sent.length, 'nothing prepared for the tick past the duration');
});

test('a request-count stop drops nothing it sent and sends nothing beyond the count', async () => {
  const events = await run(rate100(sessions(4, 1), { requestCount: 3 }), 5);
  assert.deepEqual(
    events.filter((e) => e.sentMs !== null).map((e) => e.sentMs),
    [0, 10, 20],
  );
  assert.equal(events.length, 3);
});

test('while a multi-turn session can still continue, ticks prepare at the tick', async () => {
  const events = await run(rate100(sessions(2, 2), {}), 15);
  const sent = events.filter((e) => e.sentMs !== null);
  assert.equal(sent.length, 4);
  for (const e of sent) {
    assert.equal(e.scheduledMs, e.sentMs);
    if (e.turn > 0) assert.equal(e.preparedMs, e.sentMs, 'a continuation is built at its tick');
  }
});
