/**
 * User-centric timing (`--user-centric-rate`, `--num-users`) on a virtual clock, against the model
 * of AIPerf's docs/tutorials/user-centric-timing.md: 15 users at 1 request/s with 20-turn sessions
 * open in a steady state (a fresh user with 20 turns at 0 s, then users with 6, 11, 16, 2, … turns
 * left, one a second), each user's turns come 15 s apart, a user whose answer is late sends its next
 * turn at once and keeps the gap from there, new users take over a slot on a fixed schedule, and
 * the run stops at its duration.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { cyclingSource } from '../../src/timing/session-source.js';
import type { DispatchItem, UserCentricReport } from '../../src/timing/types.js';
import { createUserCentric, openingUsers } from '../../src/timing/user-centric.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

const S = 1e9;

function sessions(n: number, turns: number): Conversation[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    contextMode: 'deltas_without_responses' as const,
    turns: Array.from(
      { length: turns },
      (_, k): Turn => ({
        index: k,
        delayMs: 99_000,
        prompt: { kind: 'text', text: 'x' },
        source: { file: 'mem', line: i },
      }),
    ),
  }));
}

interface Sent {
  sessionNum: number;
  turn: number;
  sentS: number;
  scheduledS: number;
  turnsInSession: number;
}

/** Runs the strategy on a virtual clock; each answer takes `answerS(item)` seconds. */
async function run(
  options: { ratePerS: number; users: number; turns: number; durationS: number; concurrency?: number },
  answerS: (item: DispatchItem) => number = () => 0.5,
): Promise<{ sent: Sent[]; report: UserCentricReport }> {
  const clock = new VirtualClock(0);
  const convs = sessions(50, options.turns);
  const strategy = createUserCentric({
    ratePerS: options.ratePerS,
    users: options.users,
    sessionTurns: options.turns,
    source: cyclingSource(convs, () => convs.map((_, i) => i)),
    stop: { durationNs: options.durationS * S },
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
  });
  const sent: Sent[] = [];
  const dispatch = {
    prepare: (item: DispatchItem) => ({
      send: async () => {
        const at = clock.nowNs();
        sent.push({
          sessionNum: item.sessionNum,
          turn: item.turn.index,
          sentS: at / S,
          scheduledS: (item.scheduledNs ?? Number.NaN) / S,
          turnsInSession: item.conversation.turns.length,
        });
        await clock.sleepUntil(at + answerS(item) * S);
      },
    }),
  };
  const done = strategy.run({ conversations: convs, clock, dispatch, signal: new AbortController().signal });
  await clock.runUntilIdle(done);
  return { sent, report: await done };
}

test('the opening steady state of the doc: 15 users, 20 turns, 1 request/s', () => {
  const opening = openingUsers(15, 20).sort((a, b) => a.order - b.order);
  assert.deepEqual(
    opening.map((u) => u.turns),
    [null, 6, 11, 16, 2, 7, 12, 17, 3, 8, 13, 18, 4, 9, 14],
  );
  assert.deepEqual(
    opening.map((u) => u.order),
    Array.from({ length: 15 }, (_, i) => i),
  );
});

test('first sends one a second, each user’s turns 15 s apart, about 1 request/s overall', async () => {
  const { sent, report } = await run({ ratePerS: 1, users: 15, turns: 20, durationS: 100 });
  const firsts = sent.filter((s) => s.turn === 0).slice(0, 15);
  assert.deepEqual(
    firsts.map((s) => s.sentS),
    Array.from({ length: 15 }, (_, i) => i),
  );
  assert.deepEqual(
    firsts.map((s) => s.turnsInSession),
    [20, 6, 11, 16, 2, 7, 12, 17, 3, 8, 13, 18, 4, 9, 14],
  );
  const bySession = new Map<number, Sent[]>();
  for (const s of sent) bySession.set(s.sessionNum, [...(bySession.get(s.sessionNum) ?? []), s]);
  for (const turns of bySession.values()) {
    for (let k = 1; k < turns.length; k++)
      assert.equal((turns[k] as Sent).sentS - (turns[k - 1] as Sent).sentS, 15);
  }
  // One send a second, every second of the 100 s.
  assert.deepEqual(
    sent.map((s) => s.sentS).sort((a, b) => a - b),
    Array.from({ length: 100 }, (_, i) => i),
  );
  assert.equal(report.issued, 100);
  assert.equal(report.users.opening, 15);
  assert.equal(report.users.turnGapS, 15);
  // The user with 2 turns left (sent first at 4 s) is replaced 2 gaps later, at 34 s, by a whole session.
  const replacement = sent.find((s) => s.turn === 0 && s.sentS === 34);
  assert.equal(replacement?.turnsInSession, 20);
});

test('a late answer sends the next turn at once, and the gap counts from there', async () => {
  // The fresh user's first answer takes 20 s (> the 15 s gap), later ones 0.5 s.
  const { sent } = await run({ ratePerS: 1, users: 15, turns: 20, durationS: 60 }, (item) =>
    item.sessionNum === 0 && item.turn.index === 0 ? 20 : 0.5,
  );
  const first = sent.filter((s) => s.sessionNum === 0).map((s) => [s.sentS, s.scheduledS]);
  assert.deepEqual(first.slice(0, 3), [
    [0, 0],
    [20, 20],
    [35, 35],
  ]);
});

test('--concurrency caps the users holding a session: a new user waits for a slot', async () => {
  const { sent } = await run({ ratePerS: 1, users: 3, turns: 4, durationS: 30, concurrency: 1 }, () => 0.5);
  const sessionsOverTime = sent.map((s) => s.sessionNum);
  // One session at a time: each session's turns are contiguous among the sends.
  const seen: number[] = [];
  for (const n of sessionsOverTime) if (seen.at(-1) !== n) seen.push(n);
  assert.equal(new Set(seen).size, seen.length, `sessions interleaved: ${sessionsOverTime.join(',')}`);
});
