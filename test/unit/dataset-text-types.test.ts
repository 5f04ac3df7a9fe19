import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadMultiTurn, multiTurnLoader } from '../../src/dataset/multi-turn.js';
import { loadRandomPool, randomPoolLoader } from '../../src/dataset/random-pool.js';
import { getDatasetLoader } from '../../src/dataset/registry.js';
import { loadSingleTurn, singleTurnLoader } from '../../src/dataset/single-turn.js';
import { type ChatMessage, type Dataset, DatasetError } from '../../src/dataset/types.js';
import { ConversationContext } from '../../src/request/conversation-context.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-text-'));
let fileCounter = 0;

function writeJsonl(rows: Array<Record<string, unknown> | string>, ending = '\n'): string {
  fileCounter += 1;
  const file = join(dir, `data${fileCounter}.jsonl`);
  writeFileSync(file, rows.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join(ending));
  return file;
}

async function rejectsWith(
  load: (file: string) => Promise<Dataset>,
  file: string,
  pattern: RegExp,
  field?: string,
): Promise<void> {
  await assert.rejects(load(file), (err: unknown) => {
    assert.ok(err instanceof DatasetError, String(err));
    assert.match(err.message, pattern);
    if (field !== undefined) assert.equal(err.field, field);
    return true;
  });
}

test('single_turn: text prompts, output_length, timing, extra; CRLF without trailing newline', async () => {
  const file = writeJsonl(
    [
      { text: 'hello', output_length: 12, timestamp: 100, extra: { temperature: 0 } },
      { texts: ['a', { name: 'q', contents: ['b', 'c'] }], delay: 50 },
      { text: 'be brief', role: 'system' },
    ],
    '\r\n',
  );
  const dataset = await loadSingleTurn(file);
  const [a, b, c] = dataset.conversations.map((conv) => conv.turns[0]);
  assert.deepEqual(a?.prompt, { kind: 'text', text: 'hello' });
  assert.equal(a?.maxTokens, 12);
  assert.equal(a?.timestampMs, 100);
  assert.deepEqual(a?.extra, { temperature: 0 });
  assert.deepEqual(b?.prompt, { kind: 'text', text: 'a\nb\nc' });
  assert.equal(b?.delayMs, 50);
  assert.equal(b?.maxTokens, undefined);
  assert.deepEqual(c?.prompt, { kind: 'messages', messages: [{ role: 'system', content: 'be brief' }] });
  assert.equal(getDatasetLoader('single_turn'), singleTurnLoader);
  assert.equal(singleTurnLoader.timestamped, false);
});

test('single_turn: session_id orders rows into one conversation without history', async () => {
  const file = writeJsonl([
    { session_id: 's', text: '1' },
    { text: 'alone' },
    { session_id: 's', text: '2' },
    { session_id: 7, text: 'x' },
  ]);
  const dataset = await loadSingleTurn(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.id, c.contextMode, c.turns.map((t) => [t.index, t.source.line])]),
    [
      [
        's',
        'message_array_with_responses',
        [
          [0, 1],
          [1, 3],
        ],
      ],
      ['single_turn-2', 'message_array_with_responses', [[0, 2]]],
      ['7', 'message_array_with_responses', [[0, 4]]],
    ],
  );
  assert.equal(dataset.turnCount, 4);
});

test('single_turn: each bad field is named with file and line', async () => {
  const load = (f: string) => loadSingleTurn(f);
  await rejectsWith(
    load,
    writeJsonl([{ text: 'ok' }, { output_length: 3 }]),
    /data\d+\.jsonl:2: field "text": expected text or a non-empty texts array/,
    'text',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', texts: ['b'] }]),
    /:1: field "texts": expected either text or texts/,
    'texts',
  );
  await rejectsWith(load, writeJsonl([{ text: 5 }]), /field "text": expected a string, got 5/, 'text');
  await rejectsWith(
    load,
    writeJsonl([{ texts: [{ name: 'n', contents: ['a', 3] }] }]),
    /field "texts\[0\]\.contents\[1\]"/,
    'texts[0].contents[1]',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', timestamp: 1, delay: 2 }]),
    /field "delay": expected either timestamp or delay/,
    'delay',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', timestamp: -1 }]),
    /field "timestamp": expected a number of ms >= 0/,
    'timestamp',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', output_length: 0 }]),
    /field "output_length": expected a positive integer/,
    'output_length',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', extra: [1] }]),
    /field "extra": expected a JSON object/,
    'extra',
  );
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', image: 'x.png' }]),
    /field "image": expected text only/,
    'image',
  );
  await rejectsWith(load, writeJsonl([{ text: 'a', session_id: 1.5 }]), /field "session_id"/, 'session_id');
  await rejectsWith(load, writeJsonl(['[1]']), /:1: expected a JSON object per line/);
});

test('single_turn: skipBadLines counts bad rows; speedup divides timestamps', async () => {
  const file = writeJsonl([{ text: 'a', timestamp: 1000 }, '{oops', { text: 3 }, { text: 'b', delay: 10 }]);
  const dataset = await loadSingleTurn(file, { skipBadLines: true, speedupRatio: 2 });
  assert.deepEqual(
    dataset.conversations.map((c) => [c.turns[0]?.timestampMs, c.turns[0]?.delayMs]),
    [
      [500, undefined],
      [undefined, 10],
    ],
  );
  assert.equal(dataset.skipped.badLines, 2);
});

test('multi_turn: turns accumulate history; rows sharing session_id are joined', async () => {
  const file = writeJsonl([
    {
      session_id: 'a',
      turns: [
        { text: 'q1', timestamp: 0 },
        { text: 'q2', delay: 500, output_length: 4 },
      ],
    },
    { turns: [{ text: 'solo' }] },
    { session_id: 'a', turns: [{ text: 'q3' }] },
  ]);
  const dataset = await loadMultiTurn(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.id, c.contextMode, c.turns.map((t) => [t.index, t.prompt])]),
    [
      [
        'a',
        'deltas_without_responses',
        [
          [0, { kind: 'text', text: 'q1' }],
          [1, { kind: 'text', text: 'q2' }],
          [2, { kind: 'text', text: 'q3' }],
        ],
      ],
      ['multi_turn-2', 'deltas_without_responses', [[0, { kind: 'text', text: 'solo' }]]],
    ],
  );
  assert.equal(dataset.conversations[0]?.turns[1]?.delayMs, 500);
  assert.equal(dataset.conversations[0]?.turns[1]?.maxTokens, 4);
  assert.equal(dataset.turnCount, 4);
  assert.equal(getDatasetLoader('multi_turn'), multiTurnLoader);
});

test('multi_turn: a leading system turn becomes a system message before the first user turn', async () => {
  const file = writeJsonl([
    { turns: [{ role: 'system', text: 'You are terse.' }, { text: 'hi', timestamp: 10 }, { text: 'more' }] },
  ]);
  const [conversation] = (await loadMultiTurn(file)).conversations;
  assert.equal(conversation?.turns.length, 2);
  assert.deepEqual(conversation?.turns[0]?.prompt, {
    kind: 'messages',
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'hi' },
    ],
  });
  assert.equal(conversation?.turns[0]?.timestampMs, 10);
  assert.deepEqual(conversation?.turns[1], {
    index: 1,
    prompt: { kind: 'text', text: 'more' },
    source: conversation?.turns[1]?.source,
  });
  // Replayed through the run's history, the system message opens the second request too.
  const context = new ConversationContext();
  const prompt = conversation?.turns[0]?.prompt;
  const first: ChatMessage[] = prompt?.kind === 'messages' ? prompt.messages : [];
  context.remember(
    'c',
    'deltas_without_responses',
    { messages: first, tokens: 6, messageTokens: [4, 2] },
    { text: 'hello!', tokens: 2 },
    false,
  );
  const second = context.messagesFor('c', 'deltas_without_responses', [{ role: 'user', content: 'more' }]);
  assert.deepEqual(
    second.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
});

test('multi_turn: bad rows and bad system turns name the field', async () => {
  const load = (f: string) => loadMultiTurn(f);
  await rejectsWith(
    load,
    writeJsonl([{ turns: [] }]),
    /:1: field "turns": expected a non-empty array/,
    'turns',
  );
  await rejectsWith(
    load,
    writeJsonl([{ turns: [{ text: 'a' }, { texts: [] }] }]),
    /:1: field "turns\[1\]\.texts"/,
    'turns[1].texts',
  );
  await rejectsWith(
    load,
    writeJsonl([{ turns: [{ text: 'a' }, 'b'] }]),
    /field "turns\[1\]": expected a JSON object/,
    'turns[1]',
  );
  await rejectsWith(
    load,
    writeJsonl([{ turns: [{ text: 'a', session_id: 'x' }] }]),
    /field "turns\[0\]\.session_id"/,
    'turns[0].session_id',
  );
  await rejectsWith(
    load,
    writeJsonl([{ turns: [{ role: 'system', text: 's' }] }]),
    /leading system turn needs a turn after it/,
    'turns[0]',
  );
  await rejectsWith(
    load,
    writeJsonl([{ turns: [{ role: 'system', text: 's', output_length: 3 }, { text: 'u' }] }]),
    /leading system turn may not have/,
    'turns[0]',
  );
});

test('random_pool: every line is a pool entry; timing and sessions are rejected', async () => {
  const file = writeJsonl([{ text: 'one' }, { texts: ['two'], output_length: 8 }]);
  const dataset = await loadRandomPool(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.id, c.turns[0]?.prompt, c.turns[0]?.maxTokens]),
    [
      ['random_pool-1', { kind: 'text', text: 'one' }, undefined],
      ['random_pool-2', { kind: 'text', text: 'two' }, 8],
    ],
  );
  assert.equal(getDatasetLoader('random_pool'), randomPoolLoader);
  assert.equal(randomPoolLoader.timestamped, false);
  const load = (f: string) => loadRandomPool(f);
  await rejectsWith(
    load,
    writeJsonl([{ text: 'a', timestamp: 5 }]),
    /field "timestamp": expected no timing field/,
    'timestamp',
  );
  await rejectsWith(load, writeJsonl([{ text: 'a', delay: 5 }]), /field "delay"/, 'delay');
  await rejectsWith(load, writeJsonl([{ text: 'a', session_id: 's' }]), /field "session_id"/, 'session_id');
  const pools = join(dir, 'pools');
  mkdirSync(pools);
  // A folder is a set of named pools (random-pool-folder.ts); one without any *.jsonl file is refused.
  await rejectsWith(load, pools, /holds no \*\.jsonl file/);
});
