import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bailianLoader, loadBailianTrace } from '../../src/dataset/bailian.js';
import { DATASET_LOADERS, getDatasetLoader } from '../../src/dataset/registry.js';
import { type Dataset, DatasetError } from '../../src/dataset/types.js';

const MULTITURN = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const STRATIFIED = 'examples/traces/bailian_traceA_stratified_head24.jsonl';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-bailian-'));
let fileCounter = 0;

/** A Bailian row with sensible defaults; `omit` drops fields entirely. */
function row(fields: Record<string, unknown>, omit: string[] = []): string {
  const base: Record<string, unknown> = {
    chat_id: 0,
    parent_chat_id: -1,
    timestamp: 0,
    input_length: 20,
    output_length: 5,
    type: 'text',
    turn: 1,
    hash_ids: [1, 2],
    ...fields,
  };
  for (const key of omit) delete base[key];
  return JSON.stringify(base);
}

function writeTrace(lines: string[], ending = '\n'): string {
  fileCounter += 1;
  const file = join(dir, `trace${fileCounter}.jsonl`);
  writeFileSync(file, lines.join(ending) + ending);
  return file;
}

function sessionsOf(dataset: Dataset): Array<[string, number[]]> {
  return dataset.conversations.map((c) => [c.id, c.turns.map((t) => t.source.line)]);
}

async function rejectsWith(file: string, pattern: RegExp, field?: string): Promise<void> {
  await assert.rejects(loadBailianTrace(file), (err: unknown) => {
    assert.ok(err instanceof DatasetError, String(err));
    assert.match(err.message, pattern);
    if (field !== undefined) assert.equal(err.field, field);
    return true;
  });
}

test('real multiturn sample: 26 sessions, 40 turns, the 555→722→816→993 chain is one 4-turn session', async () => {
  const dataset = await loadBailianTrace(MULTITURN);
  assert.equal(dataset.conversations.length, 26);
  assert.equal(dataset.turnCount, 40);
  assert.equal(dataset.blockSize, 16);
  const long = dataset.conversations.filter((c) => c.turns.length === 4);
  assert.equal(long.length, 1);
  assert.equal(long[0]?.id, '555');
  assert.deepEqual(
    long[0]?.turns.map((t) => t.index),
    [0, 1, 2, 3],
  );
  const times = long[0]?.turns.map((t) => t.timestampMs ?? Number.NaN) ?? [];
  assert.deepEqual(
    times,
    [...times].sort((a, b) => a - b),
  );
  for (const c of dataset.conversations) assert.equal(c.contextMode, 'message_array_with_responses');
  assert.deepEqual(dataset.skipped, { beforeStartOffset: 0, afterEndOffset: 0, badLines: 0 });
});

test('real stratified sample: 24 single-turn sessions with synthetic 16-token-block prompts', async () => {
  const dataset = await loadBailianTrace(STRATIFIED);
  assert.equal(dataset.conversations.length, 24);
  assert.equal(dataset.turnCount, 24);
  const first = dataset.conversations[0]?.turns[0];
  assert.equal(first?.timestampMs, 206); // 0.206 s in the file
  assert.equal(first?.prompt.kind, 'synthetic');
  if (first?.prompt.kind === 'synthetic') {
    assert.equal(first.prompt.blockSize, 16);
    assert.equal(first.prompt.hashIds.length, Math.ceil(first.prompt.inputLength / 16));
  }
});

test('turn fields: seconds → ms, output_length → maxTokens, type, source; defaults applied', async () => {
  const file = writeTrace([
    row({ chat_id: 1, timestamp: 1.5, output_length: 3, type: 'search' }),
    row({ chat_id: 2 }, ['parent_chat_id', 'type', 'turn', 'hash_ids']),
  ]);
  const dataset = await loadBailianTrace(file);
  const [a, b] = dataset.conversations.map((c) => c.turns[0]);
  assert.equal(a?.timestampMs, 1500);
  assert.equal(a?.maxTokens, 3);
  assert.equal(a?.requestType, 'search');
  assert.deepEqual(a?.source, { file, line: 1 });
  assert.equal(b?.requestType, '');
  assert.deepEqual(b?.prompt, { kind: 'synthetic', inputLength: 20, hashIds: [], blockSize: 16 });
});

test('output_length 0 is rejected naming file, line and field (servers refuse 0 max tokens)', async () => {
  const file = writeTrace([row({ chat_id: 1 }), row({ chat_id: 2, output_length: 0 })]);
  await assert.rejects(loadBailianTrace(file), (err: Error) => {
    assert.match(err.message, new RegExp(`${file.replaceAll('.', '\\.')}:2: field "output_length"`));
    return true;
  });
});

test('a child whose parent is not in the file becomes its own root, and is reported', async () => {
  const file = writeTrace([
    row({ chat_id: 5, parent_chat_id: 99, turn: 2 }),
    row({ chat_id: 6, parent_chat_id: 5, turn: 3 }),
  ]);
  const dataset = await loadBailianTrace(file);
  assert.deepEqual(sessionsOf(dataset), [['5', [1, 2]]]);
  assert.deepEqual(dataset.skipped.unlinkedRows, {
    count: 1,
    rows: [{ line: 1, chatId: '5', parentChatId: '99', reason: 'not_read' }],
  });
});

test('a parent later in the file, stamped later, or the row itself does not link: own sessions, reported', async () => {
  const file = writeTrace([
    row({ chat_id: 1, parent_chat_id: 2 }),
    row({ chat_id: 2, parent_chat_id: 3 }),
    row({ chat_id: 3, parent_chat_id: 1 }),
    row({ chat_id: 7, parent_chat_id: 7 }),
    row({ chat_id: 8, timestamp: 5 }),
    row({ chat_id: 9, parent_chat_id: 8, timestamp: 4, turn: 2 }),
  ]);
  const dataset = await loadBailianTrace(file);
  assert.deepEqual(sessionsOf(dataset), [
    ['1', [1, 3]],
    ['2', [2]],
    ['7', [4]],
    ['8', [5]],
    ['9', [6]],
  ]);
  assert.deepEqual(dataset.skipped.unlinkedRows, {
    count: 4,
    rows: [
      { line: 1, chatId: '1', parentChatId: '2', reason: 'later_row' },
      { line: 2, chatId: '2', parentChatId: '3', reason: 'later_row' },
      { line: 4, chatId: '7', parentChatId: '7', reason: 'self' },
      { line: 6, chatId: '9', parentChatId: '8', reason: 'later_timestamp' },
    ],
  });
});

test('turns are ordered by `turn` with ties in file order; sessions by first appearance', async () => {
  const file = writeTrace([
    row({ chat_id: 11, turn: 1 }),
    row({ chat_id: 20 }),
    row({ chat_id: 10, turn: 3, parent_chat_id: 11 }),
    row({ chat_id: 12, turn: 2, parent_chat_id: 11 }),
    row({ chat_id: 13, turn: 3, parent_chat_id: 11 }),
  ]);
  const dataset = await loadBailianTrace(file);
  assert.deepEqual(sessionsOf(dataset), [
    ['11', [1, 4, 3, 5]],
    ['20', [2]],
  ]);
  assert.equal(dataset.skipped.unlinkedRows, undefined);
});

test('a repeated chat_id: a root starts its own session, a child links to the latest earlier row of its parent id; every row stays a turn', async () => {
  const file = writeTrace([
    row({ chat_id: 1 }),
    row({ chat_id: 2, parent_chat_id: 1 }),
    row({ chat_id: 2, parent_chat_id: -1 }),
    row({ chat_id: 3, parent_chat_id: 2 }),
  ]);
  const dataset = await loadBailianTrace(file);
  assert.equal(dataset.turnCount, 4);
  assert.deepEqual(sessionsOf(dataset), [
    ['1', [1, 2]],
    ['2@3', [3, 4]],
  ]);
  assert.deepEqual(dataset.skipped.repeatedChatIds, { count: 1, rows: [{ line: 3, chatId: '2' }] });
});

test('offsets are inclusive, in ms before speedup, and filter before grouping', async () => {
  const file = writeTrace([
    row({ chat_id: 1, timestamp: 0.999 }),
    row({ chat_id: 2, timestamp: 1 }),
    row({ chat_id: 3, timestamp: 1.5, parent_chat_id: 1, turn: 2 }),
    row({ chat_id: 4, timestamp: 2 }),
    row({ chat_id: 5, timestamp: 2.001 }),
  ]);
  const dataset = await loadBailianTrace(file, { startOffsetMs: 1000, endOffsetMs: 2000, speedupRatio: 2 });
  assert.deepEqual(dataset.skipped, {
    beforeStartOffset: 1,
    afterEndOffset: 1,
    badLines: 0,
    unlinkedRows: { count: 1, rows: [{ line: 3, chatId: '3', parentChatId: '1', reason: 'outside_window' }] },
  });
  assert.deepEqual(sessionsOf(dataset), [
    ['2', [2]],
    ['3', [3]],
    ['4', [4]],
  ]);
  assert.deepEqual(
    dataset.conversations.map((c) => c.turns[0]?.timestampMs),
    [500, 750, 1000],
  );
});

test('an offset window with no rows fails naming both offsets', async () => {
  const file = writeTrace([row({ chat_id: 1, timestamp: 1 }), row({ chat_id: 2, timestamp: 5 })]);
  await assert.rejects(loadBailianTrace(file, { startOffsetMs: 2000, endOffsetMs: 3000 }), (err: unknown) => {
    assert.ok(err instanceof DatasetError);
    assert.match(err.message, /2000 ms/);
    assert.match(err.message, /3000 ms/);
    return true;
  });
});

test('speedup ratio divides timestamps and must be > 0', async () => {
  const file = writeTrace([row({ chat_id: 1, timestamp: 3 })]);
  const fast = await loadBailianTrace(file, { speedupRatio: 4 });
  assert.equal(fast.conversations[0]?.turns[0]?.timestampMs, 750);
  await assert.rejects(loadBailianTrace(file, { speedupRatio: 0 }), /speedupRatio/);
  await assert.rejects(loadBailianTrace(file, { speedupRatio: -1 }), /speedupRatio/);
});

test('a wrong type names file:line and the field', async () => {
  const file = writeTrace([row({ chat_id: 1 }), '', row({ chat_id: 2, input_length: 'abc' })]);
  await rejectsWith(
    file,
    new RegExp(`${file}:3: field "input_length": expected a positive integer, got "abc"`),
    'input_length',
  );
});

test('a missing required field names file:line and the field', async () => {
  const file = writeTrace([row({ chat_id: 1 }, ['timestamp'])]);
  await rejectsWith(file, new RegExp(`${file}:1: field "timestamp": .*missing`), 'timestamp');
  await rejectsWith(writeTrace([row({}, ['output_length'])]), /:1: field "output_length"/, 'output_length');
  await rejectsWith(writeTrace([row({}, ['chat_id'])]), /:1: field "chat_id"/, 'chat_id');
});

test('negative timestamps, zero input and non-integer hash ids are rejected', async () => {
  await rejectsWith(writeTrace([row({ timestamp: -1 })]), /field "timestamp"/, 'timestamp');
  await rejectsWith(writeTrace([row({ input_length: 0 })]), /field "input_length"/, 'input_length');
  await rejectsWith(writeTrace([row({ hash_ids: [1, '2'] })]), /field "hash_ids\[1\]"/, 'hash_ids[1]');
});

test('a non-JSON line names file:line', async () => {
  const file = writeTrace([row({ chat_id: 1 }), '{"chat_id": 2,']);
  await rejectsWith(file, new RegExp(`${file}:2: not valid JSON`));
});

test('skipBadLines counts malformed and non-JSON lines instead of failing', async () => {
  const file = writeTrace([
    row({ chat_id: 1 }),
    'garbage',
    row({ chat_id: 2, output_length: -3 }),
    '[1,2]',
    row({ chat_id: 3 }),
  ]);
  const dataset = await loadBailianTrace(file, { skipBadLines: true });
  assert.equal(dataset.turnCount, 2);
  assert.equal(dataset.skipped.badLines, 3);
});

test('CRLF line ends and no trailing newline load the same rows', async () => {
  fileCounter += 1;
  const file = join(dir, `crlf${fileCounter}.jsonl`);
  writeFileSync(file, [row({ chat_id: 1 }), row({ chat_id: 2, parent_chat_id: 1, turn: 2 })].join('\r\n'));
  const dataset = await loadBailianTrace(file);
  assert.deepEqual(sessionsOf(dataset), [['1', [1, 2]]]);
});

test('a Git LFS pointer instead of the trace fails clearly', async () => {
  const file = writeTrace(['version https://git-lfs.github.com/spec/v1', 'oid sha256:abc', 'size 1']);
  await rejectsWith(file, /Git LFS pointer/);
});

test('too many hash ids for input_length at the block size is an error naming the line', async () => {
  // 3 ids need more than 2·16 = 32 tokens.
  await rejectsWith(
    writeTrace([row({}), row({ input_length: 32, hash_ids: [1, 2, 3] })]),
    /:2: field "hash_ids"/,
  );
  const ok = await loadBailianTrace(writeTrace([row({ input_length: 33, hash_ids: [1, 2, 3] })]));
  assert.equal(ok.turnCount, 1);
  // With an 8-token block override the same row fits (3 ids need more than 16 tokens) and the prompt records it.
  const small = await loadBailianTrace(writeTrace([row({ input_length: 32, hash_ids: [1, 2, 3] })]), {
    blockSize: 8,
  });
  const prompt = small.conversations[0]?.turns[0]?.prompt;
  assert.equal(prompt?.kind === 'synthetic' ? prompt.blockSize : undefined, 8);
  assert.equal(small.blockSize, 8);
});

test('registry maps bailian_trace and mooncake_trace and rejects unknown names with the list', () => {
  assert.equal(getDatasetLoader('bailian_trace'), bailianLoader);
  assert.equal(bailianLoader.defaultBlockSize, 16);
  assert.equal(bailianLoader.timestamped, true);
  assert.ok(Object.keys(DATASET_LOADERS).includes('bailian_trace'));
  assert.ok(Object.keys(DATASET_LOADERS).includes('mooncake_trace'));
  assert.throws(
    () => getDatasetLoader('sharegpt'),
    /unknown dataset type "sharegpt".*bailian_trace, mooncake_trace/,
  );
});
