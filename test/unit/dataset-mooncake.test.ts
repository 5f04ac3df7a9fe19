import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadMooncakeTrace, mooncakeLoader } from '../../src/dataset/mooncake.js';
import { getDatasetLoader } from '../../src/dataset/registry.js';
import { DatasetError } from '../../src/dataset/types.js';

const CONVERSATION = 'examples/traces/mooncake_conversation_trace.jsonl';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-mooncake-'));
let fileCounter = 0;

function writeTrace(rows: Array<Record<string, unknown> | string>): string {
  fileCounter += 1;
  const file = join(dir, `trace${fileCounter}.jsonl`);
  writeFileSync(file, rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n');
  return file;
}

async function rejectsWith(file: string, pattern: RegExp, field?: string): Promise<void> {
  await assert.rejects(loadMooncakeTrace(file), (err: unknown) => {
    assert.ok(err instanceof DatasetError, String(err));
    assert.match(err.message, pattern);
    if (field !== undefined) assert.equal(err.field, field);
    return true;
  });
}

test('real conversation trace: 12,031 single-turn sessions with 512-token blocks and ms timestamps', async () => {
  const dataset = await loadMooncakeTrace(CONVERSATION);
  assert.equal(dataset.turnCount, 12031);
  assert.equal(dataset.conversations.length, 12031);
  assert.equal(dataset.blockSize, 512);
  const last = dataset.conversations.at(-1)?.turns[0];
  assert.equal(last?.timestampMs, 3536999);
  assert.equal(dataset.conversations[0]?.contextMode, 'deltas_without_responses');
  assert.equal(getDatasetLoader('mooncake_trace'), mooncakeLoader);
});

test('input_length rows become synthetic prompts; output_length, delay, extra are kept', async () => {
  const file = writeTrace([
    { timestamp: 12.5, input_length: 600, output_length: 7, hash_ids: [3, 4], extra: { ignore_eos: true } },
    { delay: 250, input_length: 10 },
  ]);
  const dataset = await loadMooncakeTrace(file);
  const [a, b] = dataset.conversations.map((c) => c.turns[0]);
  assert.deepEqual(a?.prompt, { kind: 'synthetic', inputLength: 600, hashIds: [3, 4], blockSize: 512 });
  assert.equal(a?.timestampMs, 12.5);
  assert.equal(a?.maxTokens, 7);
  assert.deepEqual(a?.extra, { ignore_eos: true });
  assert.equal(b?.timestampMs, undefined);
  assert.equal(b?.delayMs, 250);
  assert.equal(b?.maxTokens, undefined);
  assert.deepEqual(b?.source, { file, line: 2 });
});

test('exactly one of input_length, text_input, messages, payload is required', async () => {
  await rejectsWith(writeTrace([{ timestamp: 0, output_length: 3 }]), /:1: .*exactly one of.*none/);
  await rejectsWith(
    writeTrace([{ input_length: 5 }, { input_length: 5, text_input: 'hi' }]),
    /:2: field "text_input": .*exactly one of.*"input_length"/,
    'text_input',
  );
  await rejectsWith(writeTrace([{ messages: [{ role: 'user', content: 'x' }], payload: {} }]), /exactly one/);
});

test('text_input, messages and payload rows produce literal prompts with the right context mode', async () => {
  const messages = [
    { role: 'system', content: 's' },
    { role: 'user', content: 'u' },
  ];
  const file = writeTrace([{ text_input: 'hello' }, { messages }, { payload: { model: 'm', prompt: 'p' } }]);
  const dataset = await loadMooncakeTrace(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.turns[0]?.prompt, c.contextMode]),
    [
      [{ kind: 'text', text: 'hello' }, 'deltas_without_responses'],
      [{ kind: 'messages', messages }, 'message_array_with_responses'],
      [{ kind: 'payload', payload: { model: 'm', prompt: 'p' } }, 'message_array_with_responses'],
    ],
  );
});

test('messages need a string role; hash_ids only with input_length', async () => {
  await rejectsWith(
    writeTrace([{ messages: [{ content: 'x' }] }]),
    /field "messages\[0\]\.role"/,
    'messages[0].role',
  );
  await rejectsWith(writeTrace([{ text_input: 'x', hash_ids: [1] }]), /field "hash_ids"/, 'hash_ids');
});

test('rows sharing session_id form one session in file order; others get generated ids', async () => {
  const file = writeTrace([
    { session_id: 'a', timestamp: 0, input_length: 5 },
    { timestamp: 1, input_length: 5 },
    { session_id: 'b', timestamp: 2, input_length: 5 },
    { session_id: 'a', delay: 100, input_length: 6 },
    { session_id: 'a', delay: 100, input_length: 7 },
  ]);
  const dataset = await loadMooncakeTrace(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.id, c.turns.map((t) => [t.index, t.source.line])]),
    [
      [
        'a',
        [
          [0, 1],
          [1, 4],
          [2, 5],
        ],
      ],
      ['mooncake-2', [[0, 2]]],
      ['b', [[0, 3]]],
    ],
  );
  assert.equal(dataset.turnCount, 5);
});

test('a session mixing input modes is an error naming the line, or skipped and counted', async () => {
  const rows = [
    { session_id: 's', input_length: 5 },
    { session_id: 's', messages: [{ role: 'user', content: 'x' }] },
    { session_id: 's', input_length: 9 },
  ];
  await rejectsWith(writeTrace(rows), /:2: .*session "s" mixes input modes/);
  const dataset = await loadMooncakeTrace(writeTrace(rows), { skipBadLines: true });
  assert.equal(dataset.turnCount, 2);
  assert.equal(dataset.skipped.badLines, 1);
});

test('offsets (inclusive, before speedup) and speedup apply to ms timestamps', async () => {
  const file = writeTrace([
    { timestamp: 99, input_length: 5 },
    { timestamp: 100, input_length: 5 },
    { timestamp: 300, input_length: 5 },
    { timestamp: 301, input_length: 5 },
  ]);
  const dataset = await loadMooncakeTrace(file, { startOffsetMs: 100, endOffsetMs: 300, speedupRatio: 10 });
  assert.deepEqual(
    dataset.conversations.map((c) => c.turns[0]?.timestampMs),
    [10, 30],
  );
  assert.deepEqual(dataset.skipped, { beforeStartOffset: 1, afterEndOffset: 1, badLines: 0 });
  await assert.rejects(loadMooncakeTrace(file, { startOffsetMs: 400 }), /start offset 400 ms/);
});

test('too many hash ids for 512-token blocks names the line; skipBadLines counts bad rows', async () => {
  // 3 ids need more than 1024 tokens at 512 per block.
  const rows = [
    { input_length: 1024, hash_ids: [0, 1, 2] },
    'oops',
    { input_length: 1025, hash_ids: [0, 1, 2] },
  ];
  await rejectsWith(writeTrace(rows), /:1: field "hash_ids"/, 'hash_ids');
  const dataset = await loadMooncakeTrace(writeTrace(rows), { skipBadLines: true });
  assert.equal(dataset.turnCount, 1);
  assert.equal(dataset.skipped.badLines, 2);
});

test('wrong field types name file:line and field', async () => {
  const file = writeTrace([{ input_length: 5, timestamp: '0' }]);
  await rejectsWith(
    file,
    new RegExp(`${file}:1: field "timestamp": expected a number >= 0, got "0"`),
    'timestamp',
  );
  await rejectsWith(
    writeTrace([{ input_length: 5, output_length: 1.5 }]),
    /field "output_length"/,
    'output_length',
  );
  await rejectsWith(writeTrace([{ input_length: 5, extra: [1] }]), /field "extra"/, 'extra');
});
