import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { before, test } from 'node:test';
import { BlockStore } from '../../src/prompt/block-store.js';
import { PromptSynthesisError, PromptSynthesizer } from '../../src/prompt/synthesizer.js';
import { loadTokenizer, type TextTokenizer } from '../../src/prompt/tokenizer.js';
import { rngFromIds } from '../../src/util/rng.js';

interface Row {
  input_length: number;
  hash_ids: number[];
}

let tokenizer: TextTokenizer;
let synth: PromptSynthesizer;

before(() => {
  tokenizer = loadTokenizer();
  synth = PromptSynthesizer.create(tokenizer, 42);
});

function rows(file: string, limit = Number.POSITIVE_INFINITY): Row[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(0, limit)
    .map((l) => JSON.parse(l) as Row);
}

for (const file of ['bailian_traceA_stratified_head24.jsonl', 'bailian_traceA_multiturn_head40.jsonl']) {
  test(`every prompt of ${file} tokenizes to exactly input_length under Qwen3`, () => {
    for (const [i, r] of rows(`examples/traces/${file}`).entries()) {
      const p = synth.synthesize(r.input_length, r.hash_ids, 16, `row${i}`);
      assert.equal(tokenizer.count(p.text), r.input_length, `row ${i + 1}`);
      assert.equal(p.tokens, r.input_length);
    }
  });
}

test('Mooncake prompts (512-token blocks) are exact too', () => {
  for (const [i, r] of rows('examples/traces/mooncake_conversation_trace.jsonl', 12).entries()) {
    const p = synth.synthesize(r.input_length, r.hash_ids, 512, `m${i}`);
    assert.equal(tokenizer.count(p.text), r.input_length, `row ${i + 1}`);
  }
});

test('rows sharing leading hash_ids share their prompt prefix byte for byte', () => {
  const a = synth.synthesize(40, [7, 8, 9], 16, 'a');
  const b = synth.synthesize(48, [7, 8, 10], 16, 'b');
  const shared = synth.blocks.block(7, 16) + synth.blocks.block(8, 16);
  assert.ok(a.text.startsWith(shared));
  assert.ok(b.text.startsWith(shared));
  assert.notEqual(a.text.slice(shared.length), b.text.slice(shared.length));
});

test('layouts: partial last block, prefix plus fresh tail, and too many ids', () => {
  const partial = synth.synthesize(20, [1, 2], 16, 'p');
  assert.equal(tokenizer.count(partial.text), 20);
  assert.ok(partial.text.startsWith(synth.blocks.block(1, 16)));
  const tail1 = synth.synthesize(40, [1], 16, 'req-1');
  const tail2 = synth.synthesize(40, [1], 16, 'req-2');
  assert.equal(tokenizer.count(tail1.text), 40);
  assert.notEqual(tail1.text, tail2.text, 'uncached tails differ between requests');
  assert.throws(() => synth.synthesize(16, [1, 2], 16, 'x'), PromptSynthesisError);
  const fresh = synth.synthesize(33, [], 16, 'nothing-cached');
  assert.equal(tokenizer.count(fresh.text), 33);
});

test('block text depends only on (seed, hash id), not on order or instance', () => {
  const other = PromptSynthesizer.create(tokenizer, 42);
  other.synthesize(16, [99], 16, 'warm');
  assert.equal(other.blocks.block(5, 16), synth.blocks.block(5, 16));
  const reseeded = PromptSynthesizer.create(tokenizer, 43);
  assert.notEqual(reseeded.blocks.block(5, 16), synth.blocks.block(5, 16));
});

test('a small block cache evicts and regenerates byte-identical text; a shorter block is a prefix', () => {
  const words = [' alpha', ' beta', ' gamma', ' delta', ' omega'];
  const small = new BlockStore(words, 9, 8);
  const first = Array.from({ length: 100 }, (_, id) => small.block(id, 16));
  const again = Array.from({ length: 100 }, (_, id) => small.block(id, 16));
  assert.deepEqual(again, first);
  const fresh = new BlockStore(words, 9);
  assert.deepEqual(
    Array.from({ length: 100 }, (_, id) => fresh.block(id, 16)),
    first,
  );
  assert.ok((first[7] as string).startsWith(small.block(7, 5)));
  assert.equal(small.block(7, 5).split(' ').length - 1, 5);
});

test('a block cache bounded by characters keeps the recent blocks and regenerates evicted ones identically', () => {
  const words = [' alpha', ' beta', ' gamma', ' delta', ' omega'];
  // 64 words are ~380 characters: a 2,000-character bound holds the last few blocks only.
  const bounded = new BlockStore(words, 9, 1_000_000, 2_000);
  const first = Array.from({ length: 50 }, (_, id) => bounded.block(id, 64));
  assert.equal(bounded.isCached(49, 64), true);
  assert.equal(bounded.isCached(0, 64), false);
  assert.equal(bounded.isCached(49, 65), false, 'a longer block than the cached one is not cached');
  const unbounded = new BlockStore(words, 9);
  assert.deepEqual(
    Array.from({ length: 50 }, (_, id) => bounded.block(id, 64)),
    first,
  );
  assert.deepEqual(
    Array.from({ length: 50 }, (_, id) => unbounded.block(id, 64)),
    first,
  );
});

test('a prompt built in steps is the prompt built at once, and long new text takes several steps', () => {
  const synth = PromptSynthesizer.create(tokenizer, 5);
  const ids = Array.from({ length: 40 }, (_, i) => 1000 + i);
  const steps = synth.piecesInSteps(40 * 512 + 3000, ids, 512, 'stepped');
  let yields = 0;
  let step = steps.next();
  for (; step.done !== true; step = steps.next()) yields++;
  const atOnce = PromptSynthesizer.create(tokenizer, 5).synthesize(40 * 512 + 3000, ids, 512, 'stepped');
  assert.equal(step.value.pieces.join(''), atOnce.text);
  assert.equal(step.value.tokens, 40 * 512 + 3000);
  assert.equal(tokenizer.count(atOnce.text), 40 * 512 + 3000);
  // 23,480 new tokens at most 8,192 per step: at least two pauses.
  assert.ok(yields >= 2, `${yields} steps`);
  // Built again, every block is cached: only the fresh tail is new text (one step).
  let again = 0;
  const cached = synth.piecesInSteps(40 * 512 + 3000, ids, 512, 'other');
  while (cached.next().done !== true) again++;
  assert.equal(again, 0);
});

test('block streams of different (seed, hash id) pairs differ, also for ids above 2^32', () => {
  const seen = new Set<string>();
  for (const seed of [0, 1, 42]) {
    for (const id of [0, 1, 2, 3, 2 ** 32, 2 ** 32 + 1, 2 ** 40, 2 ** 52, 12345678]) {
      const next = rngFromIds(seed, id);
      seen.add(`${next()}:${next()}`);
    }
  }
  assert.equal(seen.size, 27);
  const a = rngFromIds(42, 2 ** 40);
  const b = rngFromIds(42, 2 ** 40);
  assert.deepEqual([a(), a(), a()], [b(), b(), b()]);
});

test('a hash id asked for at two sizes counts as a block-size conflict; the same size does not', () => {
  const store = new BlockStore([' alpha', ' beta', ' gamma'], 1);
  store.block(6, 16);
  store.block(6, 16);
  assert.equal(store.sizeConflicts, 0);
  store.block(5, 16);
  store.block(5, 8);
  assert.equal(store.sizeConflicts, 1);
});
