import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Conversation, Turn } from '../../src/dataset/types.js';
import { earliestFirstTurnMs, ScheduleError } from '../../src/timing/fixed-schedule.js';
import { type Sent, virtualReplay } from '../helpers/virtual-replay.js';

function turn(index: number, timestampMs?: number, delayMs?: number): Turn {
  return {
    index,
    ...(timestampMs === undefined ? {} : { timestampMs }),
    ...(delayMs === undefined ? {} : { delayMs }),
    prompt: { kind: 'text', text: 'x' },
    source: { file: 't.jsonl', line: index + 1 },
  };
}

function conv(id: string, turns: Turn[]): Conversation {
  return { id, turns, contextMode: 'message_array_with_responses' };
}

/** Replays whole conversations on a virtual clock; each request takes `durationMs(id, turn)`. */
async function replay(
  conversations: Conversation[],
  zeroMs: number,
  durationMs: (id: string, turn: number) => number,
  concurrency?: number,
): Promise<Sent[]> {
  const { sent } = await virtualReplay({
    conversations,
    zeroMs,
    durationMs,
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  return sent;
}

test('first turns go out at start + (ts - zero), in timestamp order, ties together', async () => {
  const sent = await replay(
    [conv('b', [turn(0, 250)]), conv('a', [turn(0, 100)]), conv('c', [turn(0, 250)])],
    100,
    () => 5,
  );
  assert.deepEqual(
    sent.map((s) => [s.id, s.sentMs]),
    [
      ['a', 0],
      ['b', 150],
      ['c', 150],
    ],
  );
  for (const s of sent) assert.equal(s.scheduledMs, s.sentMs);
});

test('a later turn waits for its parent when the parent runs past its timestamp', async () => {
  // turn 1 is due at 50 ms but turn 0 takes 80 ms: it goes at 80 ms, scheduled = completion.
  const sent = await replay([conv('s', [turn(0, 0), turn(1, 50), turn(2, 500)])], 0, () => 80);
  assert.deepEqual(
    sent.map((s) => [s.turn, s.sentMs, s.scheduledMs]),
    [
      [0, 0, 0],
      [1, 80, 80],
      [2, 500, 500],
    ],
  );
  // never two requests of one session in flight
  for (let i = 1; i < sent.length; i++) assert.ok((sent[i]?.sentMs ?? 0) >= (sent[i - 1]?.doneMs ?? 0));
});

test('delay-based later turns count from the previous completion', async () => {
  const sent = await replay([conv('s', [turn(0, 10), turn(1, undefined, 30)])], 0, () => 20);
  assert.deepEqual(
    sent.map((s) => s.sentMs),
    [10, 60],
  );
});

test('late first turns are sent at once, never dropped', async () => {
  // zero at 0, but with concurrency 1 the second session queues behind the first's 100 ms.
  const sent = await replay([conv('a', [turn(0, 0)]), conv('b', [turn(0, 10)])], 0, () => 100, 1);
  assert.deepEqual(
    sent.map((s) => [s.id, s.sentMs, s.scheduledMs]),
    [
      ['a', 0, 0],
      ['b', 100, 10],
    ],
  );
});

test('auto-offset zero is the earliest first-turn timestamp; a missing one is an error', () => {
  assert.equal(earliestFirstTurnMs([conv('a', [turn(0, 300)]), conv('b', [turn(0, 120)])]), 120);
  assert.throws(() => earliestFirstTurnMs([conv('a', [turn(0)])]), ScheduleError);
});

test('at most 64 requests are built ahead; every one still goes out on time', async () => {
  const conversations: Conversation[] = [];
  for (let i = 0; i < 300; i++) conversations.push(conv(`s${i}`, [turn(0, i)]));
  for (let i = 0; i < 100; i++) conversations.push(conv(`b${i}`, [turn(0, 500)]));
  let built = 0;
  let sentCount = 0;
  let maxAhead = 0;
  const { sent } = await virtualReplay({
    conversations,
    zeroMs: 0,
    durationMs: () => 0.5,
    onPrepare: () => {
      built++;
      maxAhead = Math.max(maxAhead, built - sentCount);
    },
    onSend: () => {
      sentCount++;
    },
  });
  assert.equal(sent.length, 400);
  assert.ok(maxAhead <= 65, `built ahead ${maxAhead}`);
  assert.ok(maxAhead >= 32, `the cap, not a short window, bounded it (${maxAhead})`);
  for (const s of sent) assert.equal(s.sentMs, s.scheduledMs, s.id);
});
