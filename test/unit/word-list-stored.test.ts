/**
 * The stored word lists (assets/word-lists, src/prompt/word-list.ts): each is what
 * `npm run word-lists` picks from its tokenizer today, and a run that uses one writes the same
 * prompts as a run that picks the list afresh from the vocabulary. The stored list only saves the
 * pick's CPU at start-up (~0.4 s a process for Qwen3); it must never change a prompt or a count.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { storedWordListFiles } from '../../scripts/word-lists.js';
import { loadTokenizer, PromptSynthesizer } from '../../src/index.js';
import { buildWordList, pickWordList, storedWordListDir } from '../../src/prompt/word-list.js';
import { PROJECT_ROOT } from '../helpers/test-cache.js';

const BUNDLED = join(PROJECT_ROOT, 'assets', 'tokenizers', 'qwen3');

test('the stored word lists are what `npm run word-lists` picks from their tokenizers today', () => {
  const expected = storedWordListFiles();
  const dir = storedWordListDir();
  assert.deepEqual(
    readdirSync(dir).map((name) => join(dir, name)),
    [...expected.keys()],
    'assets/word-lists holds other files than the lists of the shipped tokenizers: run `npm run word-lists`',
  );
  for (const [path, text] of expected) {
    assert.equal(readFileSync(path, 'utf8'), text, `${path} is stale: run \`npm run word-lists\``);
  }
});

/**
 * The bundled vocabulary in a folder of its own, as a tokenizer.json written again with another
 * layout (two-space indents): the same tokenizer, another file content, so another fingerprint.
 */
function unstoredCopy(dir: string): string {
  const json = JSON.parse(
    gunzipSync(readFileSync(join(BUNDLED, 'tokenizer.json.gz'))).toString('utf8'),
  ) as object;
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(json, null, 2));
  copyFileSync(join(BUNDLED, 'tokenizer_config.json'), join(dir, 'tokenizer_config.json'));
  return dir;
}

test('the bundled vocabulary has the stored list wherever its file is (as the Hub serves it, not gzipped)', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-words-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'tokenizer.json'), gunzipSync(readFileSync(join(BUNDLED, 'tokenizer.json.gz'))));
  const plain = loadTokenizer(join(dir, 'tokenizer.json'));
  assert.equal(plain.fingerprint, loadTokenizer('builtin').fingerprint);
  assert.deepEqual(buildWordList(plain), pickWordList(plain));
});

test('a tokenizer with no stored list picks the same words, and the same seed writes the same prompts', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-words-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const builtin = loadTokenizer('builtin');
  const copy = loadTokenizer(unstoredCopy(dir));
  assert.notEqual(copy.fingerprint, builtin.fingerprint);
  assert.ok(builtin.fingerprint !== undefined);
  const stored = readdirSync(storedWordListDir());
  assert.ok(stored.includes(`${builtin.fingerprint}.json`), 'the bundled tokenizer has a stored list');
  assert.ok(!stored.includes(`${copy.fingerprint}.json`));

  const fromStore = buildWordList(builtin);
  const picked = buildWordList(copy);
  assert.deepEqual(picked, pickWordList(copy));
  assert.deepEqual(fromStore, picked);

  const a = PromptSynthesizer.create(builtin, 42);
  const b = PromptSynthesizer.create(copy, 42);
  for (const [isl, ids] of [
    [700, [1, 2]],
    [513, [1, 2, 3]],
    [64, []],
  ] as const) {
    const pa = a.synthesize(isl, ids, 256, `k${isl}`);
    assert.deepEqual(pa, b.synthesize(isl, ids, 256, `k${isl}`));
    assert.equal(pa.tokens, isl);
  }
});

test('the words a stored list primes into the encoder encode as the library encodes them', () => {
  const fast = loadTokenizer('builtin');
  const { words, ids } = buildWordList(fast);
  const library = loadTokenizer('builtin', { engine: 'library' });
  const sample = words.filter((_, i) => i % 37 === 0);
  assert.deepEqual(
    sample.map((w) => fast.encode(w)),
    sample.map((w) => library.encode(w)),
  );
  assert.deepEqual(
    sample.map((w) => fast.encode(w)),
    ids.filter((_, i) => i % 37 === 0).map((id) => [id]),
  );
  const text = sample.join('');
  assert.deepEqual(fast.encode(text), library.encode(text));
});
