/**
 * The wall-time clock: never releases a sleeper before its target (with the wake thread, with
 * timers and polling only, and in spin precision), releases in target order, wakes every sleeper
 * of an aborted signal, and never keeps the process alive once nothing sleeps. No lateness bounds:
 * those depend on the machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { RealClock, type RealClockOptions } from '../../src/timing/real-clock.js';
import { WakeThread } from '../../src/timing/wake-thread.js';
import { childModule } from '../helpers/child-module.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const MS = 1e6;

const variants: Array<[string, RealClockOptions]> = [
  ['timer with the wake thread', {}],
  ['timer, timers and polling only', { wakeThread: false }],
  ['spin', { precision: 'spin' }],
];

for (const [name, options] of variants) {
  test(`${name}: sleepers wake at or after their targets, in target order`, async () => {
    const clock = new RealClock(options);
    for (let round = 0; round < 40; round++) {
      // Every sleeper is registered well before the first target (a past target resolves at once).
      const start = clock.nowNs() + 5 * MS;
      const offsetsMs = [0.2, 3, 0.7, 1.4, 0.05, 12];
      const woke: number[] = [];
      await Promise.all(
        offsetsMs.map(async (ms) => {
          const target = start + ms * MS;
          await clock.sleepUntil(target);
          const now = clock.nowNs();
          assert.ok(now >= target, `${ms} ms sleeper woke ${(target - now) / 1000} us early`);
          woke.push(ms);
        }),
      );
      assert.deepEqual(
        woke,
        [...offsetsMs].sort((a, b) => a - b),
      );
    }
  });
}

test('aborting a signal wakes every sleeper on it at once; an aborted signal does not sleep', async () => {
  const clock = new RealClock();
  const ctrl = new AbortController();
  const far = clock.nowNs() + 60_000 * MS;
  const sleepers = [clock.sleepUntil(far, ctrl.signal), clock.sleepUntil(far + MS, ctrl.signal)];
  const other = new AbortController();
  const unrelated = clock.sleepUntil(clock.nowNs() + 2 * MS, other.signal);
  ctrl.abort();
  await Promise.all(sleepers);
  await unrelated;
  await clock.sleepUntil(far, ctrl.signal);
});

test('the wake thread wakes only clients that are due, at or after their targets', async () => {
  const thread = WakeThread.shared();
  assert.ok(thread !== null, 'worker threads are available');
  const now = (): number => performance.now() * MS;
  const woke: string[] = [];
  const wakeAt = (name: string, target: number): Promise<void> =>
    new Promise((resolve) =>
      thread.request(
        {
          onWake: () => {
            assert.ok(now() >= target, `${name} woke early`);
            woke.push(name);
            resolve();
          },
        },
        target,
      ),
    );
  const keepAlive = setTimeout(() => undefined, 10_000);
  const cancelled = { onWake: () => woke.push('cancelled') };
  thread.request(cancelled, now() + 1 * MS);
  thread.cancel(cancelled);
  await Promise.all([wakeAt('b', now() + 3 * MS), wakeAt('a', now() + 0.5 * MS)]);
  clearTimeout(keepAlive);
  assert.deepEqual(woke, ['a', 'b']);
});

test('a process whose clock has nothing left to wait for exits (no wake thread or timer of an aborted sleep holds it open)', () => {
  const clock = childModule(import.meta.url, '../../src/timing/real-clock');
  const clockUrl = pathToFileURL(clock.path).href;
  const script = `
    const { RealClock } = await import(${JSON.stringify(clockUrl)});
    const clock = new RealClock();
    for (let i = 0; i < 50; i++) await clock.sleepUntil(clock.nowNs() + 300_000);
    await clock.sleepUntil(clock.nowNs() + 20_000_000);
    const stop = new AbortController();
    const far = clock.sleepUntil(clock.nowNs() + 600e9, stop.signal);
    stop.abort();
    await far;
    console.log('done');
  `;
  const child = spawnSync(process.execPath, [...clock.execArgv, '--input-type=module', '-e', script], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
    timeout: 30_000,
  });
  assert.equal(child.stdout.trim(), 'done', child.stderr);
  assert.equal(child.status, 0);
});
