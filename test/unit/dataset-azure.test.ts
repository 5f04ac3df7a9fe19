import assert from 'node:assert/strict';
import { test } from 'node:test';
import { azureLoader, loadAzureTrace } from '../../src/dataset/azure.js';
import { splitCsvLine } from '../../src/dataset/csv-reader.js';
import { getDatasetLoader } from '../../src/dataset/registry.js';
import { msBetween, parseTraceDatetime } from '../../src/dataset/trace-time.js';
import type { Dataset, LoadOptions } from '../../src/dataset/types.js';
import { assertDatasetError, tempFileWriter } from '../helpers/dataset-files.js';

const CODE = 'examples/traces/azure_llm_2023_code.csv';
const CONV = 'examples/traces/azure_llm_2023_conv.csv';
const HEADER = 'TIMESTAMP,ContextTokens,GeneratedTokens';

const write = tempFileWriter('azure', 'csv');

/** Writes lines joined by CRLF with no trailing newline, like the real 2023 files. */
function writeCsv(lines: string[], ending = '\r\n', trailing = ''): string {
  return write(lines.join(ending) + trailing);
}

function rejectsWith(file: string, pattern: RegExp, field?: string, options?: LoadOptions): Promise<void> {
  return assertDatasetError(loadAzureTrace, file, pattern, field, options);
}

function timestamps(dataset: Dataset): Array<number | undefined> {
  return dataset.conversations.map((c) => c.turns[0]?.timestampMs);
}

test('real 2023 code trace: 8,819 single-turn requests over 3,435.948056 s', async () => {
  const dataset = await loadAzureTrace(CODE);
  assert.equal(dataset.turnCount, 8819);
  assert.equal(dataset.conversations.length, 8819);
  const first = dataset.conversations[0]?.turns[0];
  assert.equal(first?.timestampMs, 0);
  assert.deepEqual(first?.prompt, { kind: 'synthetic', inputLength: 4808, hashIds: [], blockSize: 512 });
  assert.equal(first?.maxTokens, 10);
  assert.equal(dataset.conversations[1]?.turns[0]?.timestampMs, 52);
  assert.equal(dataset.conversations.at(-1)?.turns[0]?.timestampMs, 3435948.056);
  assert.equal(getDatasetLoader('azure_trace'), azureLoader);
  assert.equal(azureLoader.timestamped, true);
});

test('real 2023 conv trace: 19,366 requests over 3,501.721937 s, never decreasing', async () => {
  const dataset = await loadAzureTrace(CONV);
  assert.equal(dataset.turnCount, 19366);
  const ts = timestamps(dataset) as number[];
  assert.equal(ts.at(-1), 3501721.937);
  assert.ok(ts.every((t, i) => i === 0 || t >= ts[i - 1]!));
  const lengths = dataset.conversations.map((c) => {
    const prompt = c.turns[0]?.prompt;
    return prompt?.kind === 'synthetic' ? prompt.inputLength : 0;
  });
  const longest = Math.max(...lengths);
  assert.equal(longest, 14050);
});

test('columns are found by header name, in any order, with extra columns ignored', async () => {
  const file = writeCsv([
    'GeneratedTokens,NumImages,TIMESTAMP,ContextTokens',
    '7,2,2024-10-15T12:00:00.269Z,100',
    '9,0,2024-10-15T12:00:01.5Z,200',
  ]);
  const dataset = await loadAzureTrace(file);
  assert.deepEqual(timestamps(dataset), [0, 1231]);
  assert.deepEqual(
    dataset.conversations.map((c) => [c.id, c.turns[0]?.maxTokens]),
    [
      ['azure-2', 7],
      ['azure-3', 9],
    ],
  );
});

test('2024 form: +00:00 zone with and without a fraction; LF with a trailing newline', async () => {
  const file = writeCsv(
    [
      HEADER,
      '2024-05-10 00:00:00.009930+00:00,10,1',
      '2024-05-10 00:00:01+00:00,10,1',
      '2024-05-10 00:00:02.5,10,1',
    ],
    '\n',
    '\n',
  );
  assert.deepEqual(timestamps(await loadAzureTrace(file)), [0, 990.07, 2490.07]);
});

test('datetime parsing keeps 100 ns digits exactly and honours zone offsets', () => {
  const a = parseTraceDatetime('2023-11-16 18:17:03.9799600');
  const b = parseTraceDatetime('2023-11-16 18:17:04.0319600');
  assert.ok(a !== undefined && b !== undefined);
  assert.equal(msBetween(a, b), 52);
  const utc = parseTraceDatetime('2024-01-01T10:00:00Z');
  const shifted = parseTraceDatetime('2024-01-01T12:00:00+02:00');
  assert.ok(utc !== undefined && shifted !== undefined);
  assert.equal(msBetween(utc, shifted), 0);
  for (const bad of [
    '2023-02-30 00:00:00',
    '2023-11-16 24:00:00',
    '2023-11-16T18:17:03.1234567890',
    '18:17:03',
  ]) {
    assert.equal(parseTraceDatetime(bad), undefined, bad);
  }
});

test('each bad row names file, line and column', async () => {
  const good = '2023-11-16 18:00:00.0000000,10,5';
  await rejectsWith(
    writeCsv([HEADER, good, 'yesterday,10,5']),
    /azure\d+\.csv:3: field "TIMESTAMP"/,
    'TIMESTAMP',
  );
  await rejectsWith(
    writeCsv([HEADER, good, '2023-11-16 18:00:01,0,5']),
    /:3: field "ContextTokens": expected an integer >= 1, got "0"/,
    'ContextTokens',
  );
  await rejectsWith(
    writeCsv([HEADER, '2023-11-16 18:00:01,-4,5']),
    /:2: field "ContextTokens"/,
    'ContextTokens',
  );
  await rejectsWith(
    writeCsv([HEADER, '2023-11-16 18:00:01,12,x']),
    /:2: field "GeneratedTokens"/,
    'GeneratedTokens',
  );
  await rejectsWith(
    writeCsv([HEADER, good, '2023-11-16 17:59:59,10,5']),
    /:3: field "TIMESTAMP": expected a time not before the first row's/,
    'TIMESTAMP',
  );
  await rejectsWith(
    writeCsv([HEADER, good, '2023-11-16 18:00:01,10']),
    /:3: malformed CSV line: expected 3 cells like the header, got 2/,
  );
});

test('a missing required column is reported against the header line', async () => {
  await rejectsWith(
    writeCsv(['TIMESTAMP,ContextTokens', '2023-11-16 18:00:00,10']),
    /:1: field "GeneratedTokens": required column missing/,
    'GeneratedTokens',
  );
});

test('skipBadLines counts bad rows; offsets are relative ms before speedup', async () => {
  const file = writeCsv([
    HEADER,
    '2023-11-16 18:00:00,10,5',
    'garbage',
    '2023-11-16 18:00:01,10,5',
    '2023-11-16 18:00:02,nope,5',
    '2023-11-16 18:00:03,10,5',
  ]);
  const dataset = await loadAzureTrace(file, { skipBadLines: true, startOffsetMs: 1000, speedupRatio: 2 });
  assert.deepEqual(timestamps(dataset), [500, 1500]);
  assert.deepEqual(dataset.skipped, { beforeStartOffset: 1, afterEndOffset: 0, badLines: 2 });
  await rejectsWith(file, /no rows inside the offset window/, undefined, {
    skipBadLines: true,
    startOffsetMs: 9000,
  });
});

test('a Git LFS pointer and an empty file fail clearly', async () => {
  await rejectsWith(
    writeCsv(['version https://git-lfs.github.com/spec/v1', 'oid sha256:abc', 'size 1']),
    /Git LFS pointer/,
  );
  await rejectsWith(writeCsv([]), /empty CSV file/);
});

test('CSV lines split with RFC 4180 quotes', () => {
  assert.deepEqual(splitCsvLine('a,b,,c'), ['a', 'b', '', 'c']);
  assert.deepEqual(splitCsvLine('"x, y",2,"say ""hi"""'), ['x, y', '2', 'say "hi"']);
  assert.deepEqual(splitCsvLine('1,"q",'), ['1', 'q', '']);
  assert.equal(splitCsvLine('"open,1'), undefined);
  assert.equal(splitCsvLine('"a"b,1'), undefined);
});
