import assert from 'node:assert/strict';
import { test } from 'node:test';
import { burstGptLoader, loadBurstGptTrace } from '../../src/dataset/burstgpt.js';
import { getDatasetLoader } from '../../src/dataset/registry.js';
import type { LoadOptions } from '../../src/dataset/types.js';
import { assertDatasetError, tempFileWriter } from '../helpers/dataset-files.js';

const HEADER_V1 = 'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type';
const HEADER_V3 =
  'Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type';

const write = tempFileWriter('burst', 'csv');

function writeCsv(lines: string[], ending = '\n'): string {
  return write(lines.join(ending) + ending);
}

function rejectsWith(file: string, pattern: RegExp, field?: string, options?: LoadOptions): Promise<void> {
  return assertDatasetError(loadBurstGptTrace, file, pattern, field, options);
}

test('release 1 rows: seconds become ms, lengths become synthetic prompts and maxTokens', async () => {
  const file = writeCsv([
    HEADER_V1,
    '5,ChatGPT,472,18,490,Conversation log',
    '45.25,ChatGPT,1087,230,1317,Conversation log',
    '118,GPT-4,417,276,693,API log',
  ]);
  const dataset = await loadBurstGptTrace(file);
  const turns = dataset.conversations.map((c) => c.turns[0]);
  assert.deepEqual(
    turns.map((t) => [t?.timestampMs, t?.maxTokens, t?.requestType]),
    [
      [5000, 18, 'ChatGPT / Conversation log'],
      [45250, 230, 'ChatGPT / Conversation log'],
      [118000, 276, 'GPT-4 / API log'],
    ],
  );
  assert.deepEqual(turns[0]?.prompt, { kind: 'synthetic', inputLength: 472, hashIds: [], blockSize: 512 });
  assert.deepEqual(
    dataset.conversations.map((c) => c.id),
    ['burstgpt-2', 'burstgpt-3', 'burstgpt-4'],
  );
  assert.equal(getDatasetLoader('burst_gpt_trace'), burstGptLoader);
  assert.equal(burstGptLoader.timestamped, true);
});

test('release 3 columns inserted before the token counts are read by name; CRLF works', async () => {
  const file = writeCsv(
    [HEADER_V3, '7,abc,3.2,GPT-4,100,20,120,Conversation log', '8,,1.0,ChatGPT,50,5,55,API log'],
    '\r\n',
  );
  const dataset = await loadBurstGptTrace(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.turns[0]?.timestampMs, c.turns[0]?.maxTokens]),
    [
      [7000, 20],
      [8000, 5],
    ],
  );
});

test('Model and Log Type are optional columns', async () => {
  const file = writeCsv(['Response tokens,Request tokens,Timestamp', '3,10,0']);
  const turn = (await loadBurstGptTrace(file)).conversations[0]?.turns[0];
  assert.equal(turn?.requestType, undefined);
  assert.equal(turn?.maxTokens, 3);
});

test('0 request tokens: skipped and counted; 0 response tokens: kept with maxTokens 1, and counted', async () => {
  const file = writeCsv([
    HEADER_V1,
    '1,ChatGPT,0,0,0,API log',
    '2,ChatGPT,300,0,300,API log',
    '3,ChatGPT,0,12,12,API log',
    '4,ChatGPT,40,9,49,API log',
  ]);
  const dataset = await loadBurstGptTrace(file);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.turns[0]?.source.line, c.turns[0]?.maxTokens]),
    [
      [3, 1],
      [5, 9],
    ],
  );
  assert.deepEqual(dataset.skipped, {
    beforeStartOffset: 0,
    afterEndOffset: 0,
    badLines: 0,
    invalidRows: 2,
    zeroOutputRows: 1,
  });
  assert.equal(dataset.turnCount, 2);
  await rejectsWith(
    writeCsv([HEADER_V1, '1,ChatGPT,0,0,0,API log']),
    /no usable rows \(1 rows with 0 "Request tokens"/,
  );
});

test('each bad row names file, line and column', async () => {
  const good = '1,ChatGPT,10,5,15,API log';
  await rejectsWith(
    writeCsv([HEADER_V1, good, '-2,ChatGPT,10,5,15,API log']),
    /burst\d+\.csv:3: field "Timestamp": expected a number >= 0/,
    'Timestamp',
  );
  await rejectsWith(
    writeCsv([HEADER_V1, 'soon,ChatGPT,10,5,15,API log']),
    /:2: field "Timestamp"/,
    'Timestamp',
  );
  await rejectsWith(
    writeCsv([HEADER_V1, good, '3,ChatGPT,1.5,5,6.5,API log']),
    /:3: field "Request tokens": expected a non-negative integer, got "1.5"/,
    'Request tokens',
  );
  await rejectsWith(
    writeCsv([HEADER_V1, '3,ChatGPT,10,,10,API log']),
    /:2: field "Response tokens"/,
    'Response tokens',
  );
  await rejectsWith(
    writeCsv(['Timestamp,Model,Response tokens', '1,ChatGPT,5']),
    /:1: field "Request tokens": required column missing/,
    'Request tokens',
  );
});

test('offsets use trace ms before speedup; skipBadLines counts malformed rows', async () => {
  const file = writeCsv([
    HEADER_V1,
    '1,ChatGPT,10,5,15,API log',
    'oops',
    '2,ChatGPT,10,5,15,API log',
    '3,ChatGPT,10,5,15,API log',
  ]);
  const dataset = await loadBurstGptTrace(file, { skipBadLines: true, endOffsetMs: 2000, speedupRatio: 4 });
  assert.deepEqual(
    dataset.conversations.map((c) => c.turns[0]?.timestampMs),
    [250, 500],
  );
  assert.deepEqual(dataset.skipped, {
    beforeStartOffset: 0,
    afterEndOffset: 1,
    badLines: 1,
    invalidRows: 0,
    zeroOutputRows: 0,
  });
});
