/**
 * A process loads the same tokenizer files once (`loadTokenizer` through the package entry): the
 * bundled vocabulary asked for twice, under either of its names, is one tokenizer; a tokenizer.json
 * that changed on disk since it was loaded is read again; the `library` engine is its own load.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { loadTokenizer } from '../../src/index.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const BUNDLED = join(PROJECT_ROOT, 'assets', 'tokenizers', 'qwen3');

test('the bundled tokenizer is loaded once per process, under either name', () => {
  const first = loadTokenizer('builtin:qwen3');
  assert.equal(loadTokenizer('builtin:qwen3'), first);
  assert.equal(loadTokenizer(), first);
  assert.deepEqual(loadTokenizer('builtin').encode('hello world'), first.encode('hello world'));
  assert.notEqual(loadTokenizer('builtin:qwen3', { engine: 'library' }), first);
  assert.equal(loadTokenizer('builtin:qwen3', { engine: 'library' }).engine, 'library');
});

test('a tokenizer.json changed on disk after it was loaded is read again', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-tok-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const json = join(dir, 'tokenizer.json');
  const original = gunzipSync(readFileSync(join(BUNDLED, 'tokenizer.json.gz'))).toString('utf8');
  writeFileSync(json, original);
  copyFileSync(join(BUNDLED, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
  const before = loadTokenizer(dir);
  assert.equal(loadTokenizer(dir), before);
  // The same vocabulary with one added token: a different file, so a different tokenizer.
  const edited = JSON.parse(original) as { added_tokens: Array<Record<string, unknown>> };
  edited.added_tokens.push({
    id: 151669,
    content: '<probe_token>',
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  writeFileSync(json, JSON.stringify(edited));
  utimesSync(json, new Date(), new Date(Date.now() + 5_000));
  const after = loadTokenizer(dir);
  assert.notEqual(after, before);
  assert.deepEqual(after.encode('<probe_token>'), [151669]);
  assert.notDeepEqual(before.encode('<probe_token>'), [151669]);
});
