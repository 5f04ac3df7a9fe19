/**
 * Trace ids read exactly through the loaders: `hash_ids` are 64-bit block hashes and `chat_id`,
 * `parent_chat_id` and `session_id` opaque integers, so ids beyond 2^53 keep every digit (equal ids
 * equal, ids differing only beyond 2^53 distinct), and a value no 64-bit hash can be is refused with
 * the file, line, field and why.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadBailianTrace, streamBailianTrace } from '../../src/dataset/bailian.js';
import { loadMooncakeTrace } from '../../src/dataset/mooncake.js';
import { loadSingleTurn } from '../../src/dataset/single-turn.js';
import type { Dataset, PromptSpec, StreamedTurn } from '../../src/dataset/types.js';
import { assertDatasetError, tempFileWriter } from '../helpers/dataset-files.js';

const writeTrace = tempFileWriter('exact-ids', 'jsonl');
const TWO_53 = '9007199254740992';
const TWO_53_PLUS_1 = '9007199254740993';
const MAX_U64 = '18446744073709551615';

/** A Bailian row written as text, so the ids keep the digits a JSON.stringify of numbers would lose. */
function bailianLine(chatId: string, parentId: string, ids: string, timestampS = 0): string {
  return `{"chat_id": ${chatId}, "parent_chat_id": ${parentId}, "timestamp": ${timestampS}, "input_length": 48, "output_length": 4, "type": "text", "turn": 1, "hash_ids": [${ids}]}`;
}

function hashIdsOf(dataset: Dataset): PromptSpec[] {
  return dataset.conversations.flatMap((c) => c.turns.map((t) => t.prompt));
}

test('Bailian hash_ids beyond 2^53 load exactly: equal ids equal, ids differing beyond 2^53 distinct', async () => {
  const file = writeTrace(
    [
      bailianLine('1', '-1', `${TWO_53}, ${TWO_53_PLUS_1}, ${MAX_U64}`),
      bailianLine('2', '-1', `${TWO_53},${TWO_53_PLUS_1},${MAX_U64}`, 1),
      bailianLine('3', '-1', `7, ${TWO_53}`, 2),
    ].join('\n'),
  );
  const prompts = hashIdsOf(await loadBailianTrace(file));
  assert.deepEqual(
    prompts.map((p) => (p.kind === 'synthetic' ? p.hashIds : null)),
    [
      [BigInt(TWO_53), BigInt(TWO_53_PLUS_1), BigInt(MAX_U64)],
      [BigInt(TWO_53), BigInt(TWO_53_PLUS_1), BigInt(MAX_U64)],
      [7, BigInt(TWO_53)],
    ],
  );
});

test('chat_id and parent_chat_id beyond 2^53 link exactly, streamed or loaded whole', async () => {
  const file = writeTrace(
    [
      bailianLine(TWO_53, '-1', '1, 2'),
      bailianLine(TWO_53_PLUS_1, TWO_53, '1, 2, 3', 1).replace('"input_length": 48', '"input_length": 60'),
      bailianLine('5', TWO_53_PLUS_1.replace(/3$/, '4'), '9', 2),
    ].join('\n'),
  );
  const whole = await loadBailianTrace(file);
  assert.deepEqual(
    whole.conversations.map((c) => [c.id, c.turns.map((t) => t.source.line)]),
    [
      [TWO_53, [1, 2]],
      ['5', [3]],
    ],
  );
  const streamed: StreamedTurn[] = [];
  for await (const t of streamBailianTrace(file).turns) streamed.push(t);
  assert.deepEqual(
    streamed.map((t) => t.sessionId),
    [TWO_53, TWO_53, '5'],
  );
  assert.deepEqual(whole.skipped.unlinkedRows?.rows, [
    { line: 3, chatId: '5', parentChatId: '9007199254740994', reason: 'not_read' },
  ]);
});

test('Mooncake hash_ids and session_id beyond 2^53 load exactly; single_turn session ids too', async () => {
  const file = writeTrace(
    [
      `{"timestamp": 0, "session_id": ${TWO_53}, "input_length": 600, "hash_ids": [${MAX_U64}, 3]}`,
      `{"timestamp": 1, "session_id": ${TWO_53_PLUS_1}, "input_length": 600, "hash_ids": [${MAX_U64}, 4]}`,
    ].join('\n'),
  );
  const dataset = await loadMooncakeTrace(file);
  assert.deepEqual(
    dataset.conversations.map((c) => c.id),
    [TWO_53, TWO_53_PLUS_1],
  );
  const first = dataset.conversations[0]?.turns[0]?.prompt;
  assert.deepEqual(first?.kind === 'synthetic' ? first.hashIds : null, [BigInt(MAX_U64), 3]);
  const text = writeTrace(
    [`{"session_id": ${TWO_53}, "text": "a"}`, `{"session_id": ${TWO_53_PLUS_1}, "text": "b"}`].join('\n'),
  );
  assert.deepEqual(
    (await loadSingleTurn(text)).conversations.map((c) => c.id),
    [TWO_53, TWO_53_PLUS_1],
  );
});

test('ids are found whatever the row layout: escaped keys, repeated keys, strings holding digits', async () => {
  const file = writeTrace(
    [
      `{ "type" : "${TWO_53_PLUS_1} [\\"x\\"]" , "hash\\u005fids" :[ ${TWO_53_PLUS_1} ,1 ], "chat_id":1,"timestamp":0,"input_length":48,"output_length":4}`,
      `{"chat_id":2,"timestamp":0,"input_length":48,"output_length":4,"hash_ids":[1],"hash_ids":[${MAX_U64}]}`,
    ].join('\n'),
  );
  const dataset = await loadBailianTrace(file);
  assert.deepEqual(
    hashIdsOf(dataset).map((p) => (p.kind === 'synthetic' ? p.hashIds : null)),
    [[BigInt(TWO_53_PLUS_1), 1], [BigInt(MAX_U64)]],
  );
  assert.equal(dataset.conversations[0]?.turns[0]?.requestType, `${TWO_53_PLUS_1} ["x"]`);
});

test('a hash id no 64-bit hash can be is refused naming file, line, element and why', async () => {
  const cases: Array<[string, RegExp]> = [
    ['18446744073709551616', /got 18446744073709551616 \(more than 64 bits\)/],
    ['-1', /got -1 \(negative\)/],
    [`-${TWO_53_PLUS_1}`, /got -9007199254740993 \(negative\)/],
    ['2.5', /got 2\.5$/],
    ['1e19', /without a fraction or an exponent/],
  ];
  for (const [id, why] of cases) {
    const file = writeTrace(['', bailianLine('1', '-1', `3, ${id}`)].join('\n'));
    await assertDatasetError(
      loadBailianTrace,
      file,
      /:2: field "hash_ids\[1\]": expected a block hash/,
      'hash_ids[1]',
    );
    await assertDatasetError(loadBailianTrace, file, why);
  }
});

test('a count beyond 2^53 is refused saying the value shown is rounded', async () => {
  const file = writeTrace(
    bailianLine('1', '-1', '1').replace('"input_length": 48', `"input_length": ${TWO_53_PLUS_1}`),
  );
  await assertDatasetError(
    loadBailianTrace,
    file,
    /field "input_length": expected a positive integer, got 9007199254740992 \(shown rounded: it is beyond 2\^53 - 1/,
    'input_length',
  );
});
