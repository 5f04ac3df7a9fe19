/**
 * The client's shared timeout list (one timer for all requests) and its per-signal cancellation
 * watch, on mocked timers and a hand-driven monotonic clock: expiry order, early timer fires,
 * removal, the delay cap, and one abort listener per signal.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { mock, test } from 'node:test';
import { AbortWatch, type AbortWatcher } from '../../src/client/abort-watch.js';
import { type Deadline, Deadlines } from '../../src/client/deadlines.js';

function entry(name: string, deadlineNs: number, expired: string[]): Deadline {
  return {
    deadlineNs,
    expire: () => expired.push(name),
    prevDeadline: null,
    nextDeadline: null,
    inDeadlines: false,
  };
}

function withClock(run: (clock: { nowMs: number }, deadlines: Deadlines) => void): void {
  mock.timers.enable({ apis: ['setTimeout'] });
  const clock = { nowMs: 0 };
  const deadlines = new Deadlines(() => clock.nowMs * 1e6);
  try {
    run(clock, deadlines);
  } finally {
    deadlines.close();
    mock.timers.reset();
  }
}

/** Advances the monotonic clock and the mocked timers together. */
function advance(clock: { nowMs: number }, ms: number): void {
  clock.nowMs += ms;
  mock.timers.tick(ms);
}

test('entries expire in deadline order, whatever the insertion order; removed ones never do', () => {
  withClock((clock, deadlines) => {
    const expired: string[] = [];
    const a = entry('a', 300e6, expired);
    const b = entry('b', 100e6, expired);
    const c = entry('c', 200e6, expired);
    const d = entry('d', 150e6, expired);
    for (const e of [a, b, c, d]) deadlines.add(e);
    deadlines.remove(d);
    advance(clock, 99);
    assert.deepEqual(expired, []);
    advance(clock, 1);
    assert.deepEqual(expired, ['b']);
    advance(clock, 200);
    assert.deepEqual(expired, ['b', 'c', 'a']);
    assert.equal(a.inDeadlines, false);
  });
});

test('a timer that fires before the monotonic deadline re-arms for the remainder', () => {
  withClock((clock, deadlines) => {
    const expired: string[] = [];
    deadlines.add(entry('a', 100.5e6, expired));
    advance(clock, 101);
    assert.deepEqual(expired, ['a']);
    const late: string[] = [];
    deadlines.add(entry('b', clock.nowMs * 1e6 + 50e6, late));
    clock.nowMs += 49; // the timer fires when the monotonic clock is still 1 ms short
    mock.timers.tick(50);
    assert.deepEqual(late, [], 'not expired before its monotonic deadline');
    advance(clock, 1);
    assert.deepEqual(late, ['b']);
  });
});

test('completed requests leave without disturbing later deadlines; an infinite timeout never fires', () => {
  withClock((clock, deadlines) => {
    const expired: string[] = [];
    const entries = Array.from({ length: 50 }, (_, i) => entry(`r${i}`, (1000 + i) * 1e6, expired));
    for (const e of entries) deadlines.add(e);
    for (const e of entries.slice(0, 49)) deadlines.remove(e);
    deadlines.add(entry('forever', Number.POSITIVE_INFINITY, expired));
    advance(clock, 1000);
    assert.deepEqual(expired, []);
    advance(clock, 49);
    assert.deepEqual(expired, ['r49']);
    advance(clock, 10_000_000);
    assert.deepEqual(expired, ['r49']);
  });
});

test('deadlines beyond the largest timer delay are not fired early', () => {
  withClock((clock, deadlines) => {
    const expired: string[] = [];
    const farMs = 2 ** 31 + 5000;
    deadlines.add(entry('far', farMs * 1e6, expired));
    advance(clock, 2 ** 31 - 1);
    assert.deepEqual(expired, []);
    advance(clock, 5001);
    assert.deepEqual(expired, ['far']);
  });
});

function watcher(name: string, seen: string[]): AbortWatcher {
  return {
    onSignalAbort: (reason) => seen.push(`${name}:${String(reason)}`),
    prevWatcher: null,
    nextWatcher: null,
    watching: null,
  };
}

test('one abort listener per signal; every remaining watcher is told once, in order', () => {
  const watch = new AbortWatch();
  const controller = new AbortController();
  const seen: string[] = [];
  const ws = ['a', 'b', 'c', 'd'].map((name) => watcher(name, seen));
  for (const w of ws) watch.add(controller.signal, w);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 1);
  watch.remove(ws[1] as AbortWatcher);
  controller.abort('stop');
  assert.deepEqual(seen, ['a:stop', 'c:stop', 'd:stop']);
  for (const w of ws) watch.remove(w);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
});

test('the listener goes away when the last watcher leaves', () => {
  const watch = new AbortWatch();
  const controller = new AbortController();
  const seen: string[] = [];
  const a = watcher('a', seen);
  const b = watcher('b', seen);
  watch.add(controller.signal, a);
  watch.add(controller.signal, b);
  watch.remove(a);
  watch.remove(b);
  assert.equal(getEventListeners(controller.signal, 'abort').length, 0);
  watch.add(controller.signal, a);
  controller.abort();
  assert.equal(seen.length, 1);
});
