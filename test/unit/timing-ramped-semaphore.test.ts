/**
 * The slots of a ramped semaphore (`--prefill-concurrency-ramp-duration`, and
 * `--concurrency-ramp-duration` of a request rate's session cap), on a virtual clock: one slot at
 * the first take, one more at each even step, all of them when the ramp ends (AIPerf's ramping.md:
 * 5 slots over 30 s open at 0, 7.5, 15, 22.5 and 30 s); waiters are served first in, first out.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RampedSemaphore } from '../../src/timing/ramped-semaphore.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

/** Takes `n` slots as soon as each is handed over; returns when each was taken, ns. */
function takeAll(gate: RampedSemaphore, clock: VirtualClock, n: number): number[] {
  const at: number[] = [];
  for (let i = 0; i < n; i++) gate.take(() => at.push(clock.nowNs()));
  return at;
}

test('5 slots over 30 s: taken at 0, 7.5, 15, 22.5 and 30 s when none is given back', async () => {
  const clock = new VirtualClock(0);
  const gate = new RampedSemaphore(5, { clock, rampNs: 30e9 });
  const at = takeAll(gate, clock, 6);
  await clock.advanceTo(60e9);
  assert.deepEqual(at, [0, 7.5e9, 15e9, 22.5e9, 30e9]);
  gate.release();
  assert.deepEqual(at, [0, 7.5e9, 15e9, 22.5e9, 30e9, 60e9], 'the sixth waited for a slot given back');
});

test('the ramp starts at the first take, and a slot given back serves the oldest waiter first', async () => {
  const clock = new VirtualClock(0);
  const gate = new RampedSemaphore(3, { clock, rampNs: 2e9 });
  await clock.advanceTo(10e9);
  const order: string[] = [];
  for (const name of ['a', 'b', 'c', 'd']) gate.take(() => order.push(`${name}@${clock.nowNs() / 1e9}`));
  assert.deepEqual(order, ['a@10'], 'one slot at the first take');
  gate.release();
  assert.deepEqual(order, ['a@10', 'b@10']);
  await clock.advanceTo(12e9);
  assert.deepEqual(order, ['a@10', 'b@10', 'c@11', 'd@12']);
});

test('without a ramp every slot is free at once; close() stops a ramp (its slots stay closed)', async () => {
  const clock = new VirtualClock(0);
  const flat = new RampedSemaphore(3);
  assert.deepEqual(takeAll(flat, clock, 4), [0, 0, 0]);
  const ramped = new RampedSemaphore(3, { clock, rampNs: 2e9 });
  const at = takeAll(ramped, clock, 3);
  ramped.close();
  await clock.advanceTo(5e9);
  assert.deepEqual(at, [0]);
});
