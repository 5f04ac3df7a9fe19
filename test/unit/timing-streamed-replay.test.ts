import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBailianTrace, streamBailianTrace } from '../../src/dataset/bailian.js';
import { loadMooncakeTrace, streamMooncakeTrace } from '../../src/dataset/mooncake.js';
import { DatasetError, type LoadOptions, type StreamedTurn, type Turn } from '../../src/dataset/types.js';
import { tempFileWriter } from '../helpers/dataset-files.js';
import { virtualReplay } from '../helpers/virtual-replay.js';

const MULTITURN = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const STRATIFIED = 'examples/traces/bailian_traceA_stratified_head24.jsonl';
const MOONCAKE = 'examples/traces/mooncake_conversation_trace.jsonl';
const writeTrace = tempFileWriter('stream', 'jsonl');

/** Reads a stream to the end (file I/O must finish before a virtual-clock replay). */
async function drain(turns: AsyncIterable<StreamedTurn>): Promise<StreamedTurn[]> {
  const out: StreamedTurn[] = [];
  for await (const t of turns) out.push(t);
  return out;
}

async function* feedOf(rows: readonly StreamedTurn[], failAfter?: Error): AsyncGenerator<StreamedTurn> {
  for (const row of rows) yield row;
  if (failAfter !== undefined) throw failAfter;
}

function row(sessionId: string, timestampMs: number, line: number, lastOfSession = true): StreamedTurn {
  const turn: Turn = {
    index: 0,
    timestampMs,
    prompt: { kind: 'text', text: 'x' },
    source: { file: 'f', line },
  };
  return { sessionId, turn, order: 0, contextMode: 'message_array_with_responses', lastOfSession };
}

/** Request latency that depends on the request, so later turns sometimes wait for their parent. */
const latencyMs = (id: string, turn: number): number => 200 + ((id.length * 37 + turn * 101) % 900);

for (const [name, file, options] of [
  ['Bailian multiturn at 20x', MULTITURN, { speedupRatio: 20 }],
  ['Bailian stratified', STRATIFIED, {}],
  [
    'Bailian multiturn, offset window',
    MULTITURN,
    { startOffsetMs: 60_000, endOffsetMs: 200_000, speedupRatio: 4 },
  ],
  // Siblings: branch sessions that wait for their parent request (dataset/bailian-links.ts).
  ['Bailian siblings demo as trees', 'examples/traces/bailian_siblings_demo.jsonl', { sessionTrees: true }],
] as const) {
  test(`streamed replay sends exactly what a whole-file replay sends: ${name}`, async () => {
    const whole = await loadBailianTrace(file, options as LoadOptions);
    const expected = await virtualReplay({
      conversations: whole.conversations,
      zeroMs: 'auto',
      durationMs: latencyMs,
    });
    const streamed = await drain(streamBailianTrace(file, options as LoadOptions).turns);
    const got = await virtualReplay({ feed: feedOf(streamed), zeroMs: 'auto', durationMs: latencyMs });
    assert.equal(got.sent.length, whole.turnCount);
    assert.deepEqual(got.sent, expected.sent);
    assert.equal(got.result.rowsRead, whole.turnCount);
    assert.equal(got.result.sessions, whole.conversations.length);
    assert.equal(got.result.outOfOrderSessions, 0);
  });
}

test('streamed Mooncake replay matches the whole-file replay (turn ids and schedule)', async () => {
  const options = { endOffsetMs: 120_000, speedupRatio: 10 };
  const whole = await loadMooncakeTrace(MOONCAKE, options);
  const expected = await virtualReplay({
    conversations: whole.conversations,
    zeroMs: 'auto',
    durationMs: latencyMs,
  });
  const stream = streamMooncakeTrace(MOONCAKE, options);
  const got = await virtualReplay({
    feed: feedOf(await drain(stream.turns)),
    zeroMs: 'auto',
    durationMs: latencyMs,
  });
  assert.deepEqual(got.sent, expected.sent);
  // The file is in timestamp order, so reading stopped at the first row after the window.
  assert.equal(stream.skipped.afterEndOffset, 1);
  assert.ok((stream.skipped.unreadAfterLine ?? 0) > whole.turnCount);
});

test('the feed is read only a bounded window ahead of the schedule', async () => {
  // 10,000 one-turn sessions 10 ms apart: 100 s of trace; the read-ahead window is 2 s.
  let read = 0;
  async function* counted(): AsyncGenerator<StreamedTurn> {
    for (let i = 0; i < 10_000; i++) {
      read++;
      yield row(`s${i}`, i * 10, i + 1);
    }
  }
  const readAtSend: number[] = [];
  const { sent, result } = await virtualReplay({
    feed: counted(),
    zeroMs: 'auto',
    durationMs: () => 50,
    readAheadNs: 2e9,
    onSend: () => readAtSend.push(read),
  });
  assert.equal(sent.length, 10_000);
  assert.equal(result.rowsRead, 10_000);
  // At every send, no more than the window (200 rows) plus one row beyond it had been read.
  for (const [k, n] of readAtSend.entries()) assert.ok(n - k <= 202, `send ${k}: ${n} rows read`);
  for (const s of sent) assert.equal(s.sentMs, s.scheduledMs);
});

test('a session read after a later one has started is counted out of order and sent at once', async () => {
  const rows = [row('a', 0, 1), row('b', 3000, 2), row('c', 10_000, 3), row('late', 1000, 4)];
  const { sent, result } = await virtualReplay({ feed: feedOf(rows), zeroMs: 'auto', durationMs: () => 10 });
  assert.equal(result.outOfOrderSessions, 1);
  const late = sent.find((s) => s.id === 'late');
  assert.ok(late !== undefined);
  // Read when the reader reached c's window (10 s − 2 s read-ahead), i.e. 7 s behind its own time.
  assert.equal(late.scheduledMs, 1000);
  assert.equal(late.sentMs, 8000);
  assert.deepEqual(
    sent.map((s) => s.id),
    ['a', 'b', 'late', 'c'],
  );
});

test('a start read late because reading waited on a far-future row is counted out of order', async () => {
  // The 8.5 s row holds the reader until 6.5 s, so the 1.0 s row behind it is read 5.5 s late.
  const rows = [row('a', 500, 1), row('far', 8500, 2), row('behind', 1000, 3), row('d', 9000, 4)];
  const { sent, result } = await virtualReplay({ feed: feedOf(rows), zeroMs: 'auto', durationMs: () => 10 });
  assert.equal(result.outOfOrderSessions, 1);
  const behind = sent.find((s) => s.id === 'behind');
  assert.equal(behind?.sentMs, 6000);
  assert.equal(behind?.scheduledMs, 500);
});

test('a later turn arriving after its session went idle is sent at its own time', async () => {
  const first = row('s', 0, 1, false);
  const second: StreamedTurn = { ...row('s', 5000, 3, false), order: 1 };
  const rows = [first, row('x', 4000, 2), second];
  const { sent } = await virtualReplay({ feed: feedOf(rows), zeroMs: 'auto', durationMs: () => 100 });
  assert.deepEqual(
    sent.map((s) => [s.id, s.turn, s.sentMs]),
    [
      ['s', 0, 0],
      ['x', 0, 4000],
      ['s', 1, 5000],
    ],
  );
});

test('a bad row mid-stream stops reading there and is reported; every row read before it is sent on its schedule', async () => {
  const bad = new DatasetError(
    't.jsonl:3: field "input_length": expected an integer',
    't.jsonl',
    3,
    'input_length',
  );
  // c (5 s) is beyond the 2 s read-ahead, so the bad row is reached 3 s into the run, before c is due.
  const rows = [row('a', 0, 1), row('b', 100, 2), row('c', 5000, 3)];
  const { sent, result } = await virtualReplay({
    feed: feedOf(rows, bad),
    zeroMs: 'auto',
    durationMs: () => 10,
  });
  assert.equal(result.feedError, bad);
  assert.deepEqual(
    sent.map((s) => s.id),
    ['a', 'b', 'c'],
  );
  assert.equal(result.issued, 3);
});

test('a bad row inside the first read-ahead window: the rows read before it are still sent', async () => {
  const bad = new DatasetError('t.jsonl:2: not valid JSON', 't.jsonl', 2);
  const { sent, result } = await virtualReplay({
    feed: feedOf([row('a', 0, 1)], bad),
    zeroMs: 'auto',
    durationMs: () => 10,
  });
  assert.equal(result.feedError, bad);
  assert.equal(result.issued, 1);
  assert.deepEqual(
    sent.map((s) => s.id),
    ['a'],
  );
});

test('Bailian stream: parents link as in a whole-file load; later, missing and self parents start sessions, reported alike', async () => {
  const line = (chat: number, parent: number, ts: number, turn: number): string =>
    JSON.stringify({
      chat_id: chat,
      parent_chat_id: parent,
      timestamp: ts,
      input_length: 32,
      output_length: 4,
      type: 'text',
      turn,
      hash_ids: [chat, chat + 100],
    });
  const file = writeTrace(
    [
      line(1, -1, 0, 1),
      line(2, 1, 1, 2),
      line(3, 99, 2, 2),
      line(4, 2, 3, 3),
      line(5, 5, 4, 1),
      line(6, 7, 5, 2),
      line(7, -1, 6, 1),
      line(8, 7, 5.5, 2),
    ].join('\n'),
  );
  const stream = streamBailianTrace(file);
  const streamed = await drain(stream.turns);
  assert.deepEqual(
    streamed.map((t) => t.sessionId),
    ['1', '1', '3', '1', '5', '6', '7', '8'],
  );
  const whole = await loadBailianTrace(file);
  assert.deepEqual(
    whole.conversations.map((c) => [c.id, c.turns.length]),
    [
      ['1', 3],
      ['3', 1],
      ['5', 1],
      ['6', 1],
      ['7', 1],
      ['8', 1],
    ],
  );
  assert.deepEqual(stream.skipped.unlinkedRows, whole.skipped.unlinkedRows);
  assert.deepEqual(
    whole.skipped.unlinkedRows?.rows.map((r) => [r.chatId, r.reason]),
    [
      ['3', 'not_read'],
      ['5', 'self'],
      ['6', 'later_row'],
      ['8', 'later_timestamp'],
    ],
  );
});

test('Mooncake stream: a session mixing input modes is an error naming the line, or skipped and counted', async () => {
  const file = writeTrace(
    [
      JSON.stringify({ session_id: 's', timestamp: 0, input_length: 10, output_length: 2 }),
      JSON.stringify({ session_id: 's', timestamp: 5, text_input: 'hello', output_length: 2 }),
      JSON.stringify({ timestamp: 6, input_length: 10, output_length: 2 }),
    ].join('\n'),
  );
  await assert.rejects(drain(streamMooncakeTrace(file).turns), (err: unknown) => {
    assert.ok(err instanceof DatasetError);
    assert.match(err.message, /:2: .*mixes input modes/);
    return true;
  });
  const skipping = streamMooncakeTrace(file, { skipBadLines: true });
  const turns = await drain(skipping.turns);
  assert.deepEqual(
    turns.map((t) => [t.sessionId, t.lastOfSession]),
    [
      ['s', false],
      ['mooncake-3', true],
    ],
  );
  assert.equal(skipping.skipped.badLines, 1);
});

test('a stream whose offset window leaves no rows fails like a whole-file load', async () => {
  const stream = streamBailianTrace(MULTITURN, { startOffsetMs: 9e9 });
  await assert.rejects(drain(stream.turns), /no rows inside the offset window/);
});
