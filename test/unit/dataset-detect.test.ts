/**
 * Dataset type detection without `--custom-dataset-type` (AIPerf's auto-detection): each format's
 * first rows name its type, a `type` field naming a dataset type wins, an `inputs.json` is found
 * pretty-printed or compact, a folder is told by its first `*.jsonl` file, and a file whose rows fit
 * two types or none is refused naming the file, the line and why.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { detectDatasetType } from '../../src/dataset/detect.js';
import { ConfigError } from '../../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-detect-'));
let n = 0;
function jsonl(rows: unknown[]): string {
  const path = join(dir, `f${n++}.jsonl`);
  writeFileSync(path, `\n${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return path;
}

const body = { messages: [{ role: 'user', content: 'hi' }], model: 'm', max_tokens: 3 };

test('each format is told by its first rows', () => {
  const cases: Array<[unknown[], string]> = [
    [[{ text: 'a' }, { texts: ['b'], output_length: 3 }], 'single_turn'],
    [[{ session_id: 's', turns: [{ text: 'a' }] }], 'multi_turn'],
    [[{ timestamp: 0, input_length: 10, output_length: 2, hash_ids: [1] }], 'mooncake_trace'],
    [[{ timestamp: 0, text_input: 'hello' }], 'mooncake_trace'],
    [
      [
        {
          chat_id: 1,
          parent_chat_id: -1,
          timestamp: 0,
          input_length: 5,
          output_length: 2,
          type: 'text',
          turn: 1,
          hash_ids: [],
        },
      ],
      'bailian_trace',
    ],
    [[body, body], 'raw_payload'],
    [[{ type: 'random_pool', text: 'a' }], 'random_pool'],
  ];
  for (const [rows, type] of cases)
    assert.equal(detectDatasetType(jsonl(rows)).type, type, JSON.stringify(rows));
});

test('an inputs.json is found pretty-printed (AIPerf) and compact (tokenload)', () => {
  const doc = { data: [{ session_id: 's', payloads: [body] }] };
  const pretty = join(dir, 'pretty.json');
  writeFileSync(pretty, JSON.stringify(doc, null, 2));
  const compact = join(dir, 'compact.json');
  writeFileSync(compact, JSON.stringify(doc));
  assert.equal(detectDatasetType(pretty).type, 'inputs_json');
  assert.equal(detectDatasetType(compact).type, 'inputs_json');
});

test('CSV headers name the Azure and BurstGPT traces', () => {
  const azure = join(dir, 'azure.csv');
  writeFileSync(azure, 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n');
  const burst = join(dir, 'burst.csv');
  writeFileSync(
    burst,
    'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,ChatGPT,472,18,490,Conversation log\n',
  );
  assert.equal(detectDatasetType(azure).type, 'azure_trace');
  assert.equal(detectDatasetType(burst).type, 'burst_gpt_trace');
});

test('a folder: raw_payload when its first *.jsonl starts with a body, else random_pool', () => {
  const bodies = join(dir, 'bodies');
  mkdirSync(bodies);
  writeFileSync(join(bodies, 'b.jsonl'), `${JSON.stringify(body)}\n`);
  writeFileSync(join(bodies, 'a.txt'), 'ignored');
  assert.equal(detectDatasetType(bodies).type, 'raw_payload');
  const pool = join(dir, 'pool');
  mkdirSync(pool);
  writeFileSync(join(pool, 'p.jsonl'), `${JSON.stringify({ text: 'a' })}\n`);
  assert.equal(detectDatasetType(pool).type, 'random_pool');
});

test('refused, naming file, line and why: two types fit, none fits, rows disagree', () => {
  const ambiguous = jsonl([{ messages: [{ role: 'user', content: 'hi' }] }]);
  assert.throws(
    () => detectDatasetType(ambiguous),
    (e: unknown) =>
      e instanceof ConfigError &&
      e.message.includes(`${ambiguous}:2:`) &&
      /mooncake_trace and raw_payload/.test(e.message),
  );
  const unknown = jsonl([{ prompt: 'x' }]);
  assert.throws(
    () => detectDatasetType(unknown),
    (e: unknown) => e instanceof ConfigError && /:2: .*no dataset type has this row shape/.test(e.message),
  );
  const mixed = jsonl([{ text: 'a' }, { turns: [] }]);
  assert.throws(
    () => detectDatasetType(mixed),
    (e: unknown) => e instanceof ConfigError && /:3: .*look like single_turn/.test(e.message),
  );
});
