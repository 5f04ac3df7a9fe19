import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type JsonlRow, readJsonl } from '../../src/dataset/jsonl-reader.js';
import { DatasetError } from '../../src/dataset/types.js';

const dir = mkdtempSync(join(tmpdir(), 'tokenload-jsonl-'));

function writeTemp(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

async function readAll(file: string, onBadJson?: (e: DatasetError) => void): Promise<JsonlRow[]> {
  const rows: JsonlRow[] = [];
  for await (const row of readJsonl(file, { onBadJson })) rows.push(row);
  return rows;
}

test('CRLF line ends, blank lines and a last line without newline are read; line numbers count blanks', async () => {
  const file = writeTemp('crlf.jsonl', '{"a":1}\r\n\r\n   \r\n{"a":2}\r\n{"a":3}');
  const rows = await readAll(file);
  assert.deepEqual(rows, [
    { line: 1, value: { a: 1 } },
    { line: 4, value: { a: 2 } },
    { line: 5, value: { a: 3 } },
  ]);
});

test('a UTF-8 byte-order mark on the first line is ignored', async () => {
  const file = writeTemp('bom.jsonl', '\uFEFF{"a":1}\n');
  assert.deepEqual(await readAll(file), [{ line: 1, value: { a: 1 } }]);
});

test('a non-JSON line fails with file and line in the message', async () => {
  const file = writeTemp('bad.jsonl', '{"a":1}\n{"a":\n{"a":3}\n');
  await assert.rejects(readAll(file), (err: unknown) => {
    assert.ok(err instanceof DatasetError);
    assert.equal(err.line, 2);
    assert.ok(err.message.startsWith(`${file}:2: not valid JSON`), err.message);
    return true;
  });
});

test('with onBadJson, a non-JSON line is reported and skipped', async () => {
  const file = writeTemp('bad-skip.jsonl', '{"a":1}\nnot json\n{"a":3}\n');
  const errors: DatasetError[] = [];
  const rows = await readAll(file, (e) => errors.push(e));
  assert.deepEqual(
    rows.map((r) => r.line),
    [1, 3],
  );
  assert.equal(errors.length, 1);
  assert.equal(errors[0]?.line, 2);
});

test('a Git LFS pointer file fails clearly', async () => {
  const file = writeTemp(
    'pointer.jsonl',
    'version https://git-lfs.github.com/spec/v1\noid sha256:07cedc9e\nsize 56000000\n',
  );
  await assert.rejects(readAll(file), (err: unknown) => {
    assert.ok(err instanceof DatasetError);
    assert.match(err.message, /Git LFS pointer/);
    assert.ok(err.message.startsWith(file));
    return true;
  });
});

test('a missing file fails with a DatasetError naming it', async () => {
  const file = join(dir, 'does-not-exist.jsonl');
  await assert.rejects(
    readAll(file),
    (err: unknown) => err instanceof DatasetError && err.message.includes(file),
  );
});
