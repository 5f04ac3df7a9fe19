import assert from 'node:assert/strict';
import { test } from 'node:test';
import { roundHalfEven, samplePositiveInt, seededRandom } from '../../src/dataset/random.js';
import {
  generateSyntheticDataset,
  PREFIX_POOL_ID_BASE,
  SHARED_SYSTEM_ID_BASE,
  USER_CONTEXT_ID_BASE,
} from '../../src/dataset/synthetic.js';
import { parseSeqDist, SyntheticOptionError } from '../../src/dataset/synthetic-options.js';
import type { Dataset, Turn } from '../../src/dataset/types.js';
import { BlockStore } from '../../src/prompt/block-store.js';

type Synthetic = { inputLength: number; hashIds: readonly number[]; blockSize: number };

function synthetic(turn: Turn | undefined): Synthetic {
  const p = turn?.prompt;
  assert.equal(p?.kind, 'synthetic');
  return p as Synthetic;
}

function allTurns(dataset: Dataset): Turn[] {
  return dataset.conversations.flatMap((c) => c.turns);
}

function mean(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

test('defaults: 100 single-turn conversations of exactly 550 tokens, no maxTokens, no delay', () => {
  const dataset = generateSyntheticDataset({ randomSeed: 0 });
  assert.equal(dataset.conversations.length, 100);
  assert.equal(dataset.turnCount, 100);
  for (const c of dataset.conversations) {
    assert.equal(c.contextMode, 'deltas_without_responses');
    assert.equal(c.turns.length, 1);
    assert.deepEqual(c.turns[0]?.prompt, { kind: 'synthetic', inputLength: 550, hashIds: [], blockSize: 16 });
    assert.equal(c.turns[0]?.maxTokens, undefined);
    assert.equal(c.turns[0]?.delayMs, undefined);
  }
  assert.equal(new Set(dataset.conversations.map((c) => c.id)).size, 100);
});

test('the same seed reproduces the dataset (seed 0 included); another seed changes it', () => {
  const options = {
    isl: 300,
    islStddev: 80,
    osl: 50,
    oslStddev: 10,
    sessionTurnsMean: 3,
    sessionTurnsStddev: 1,
  };
  const a = generateSyntheticDataset({ ...options, randomSeed: 0 });
  const b = generateSyntheticDataset({ ...options, randomSeed: 0 });
  const c = generateSyntheticDataset({ ...options, randomSeed: 1 });
  assert.deepEqual(a, b);
  assert.notDeepEqual(
    allTurns(a).map((t) => synthetic(t).inputLength),
    allTurns(c).map((t) => synthetic(t).inputLength),
  );
});

test('ISL and OSL follow the configured normal distributions', () => {
  const dataset = generateSyntheticDataset({
    randomSeed: 42,
    numDatasetEntries: 4000,
    isl: 1000,
    islStddev: 100,
    osl: 200,
    oslStddev: 20,
  });
  const isl = allTurns(dataset).map((t) => synthetic(t).inputLength);
  const osl = allTurns(dataset).map((t) => t.maxTokens ?? Number.NaN);
  // ceil() of a normal sample adds 0.5 on average.
  assert.ok(Math.abs(mean(isl) - 1000.5) < 5, `mean ISL ${mean(isl)}`);
  const sd = Math.sqrt(mean(isl.map((x) => (x - mean(isl)) ** 2)));
  assert.ok(Math.abs(sd - 100) < 5, `ISL stddev ${sd}`);
  assert.ok(Math.abs(mean(osl) - 200.5) < 1.5, `mean OSL ${mean(osl)}`);
  assert.ok(isl.every((x) => Number.isInteger(x) && x >= 1));
});

test('session turns and turn delays: counts, delay only after the first turn, ratio applied', () => {
  const dataset = generateSyntheticDataset({
    randomSeed: 7,
    numDatasetEntries: 10,
    sessionTurnsMean: 4,
    sessionTurnDelayMeanMs: 1000,
    sessionTurnDelayRatio: 0.5,
  });
  assert.equal(dataset.turnCount, 40);
  for (const c of dataset.conversations) {
    assert.deepEqual(
      c.turns.map((t) => [t.index, t.delayMs]),
      [
        [0, undefined],
        [1, 500],
        [2, 500],
        [3, 500],
      ],
    );
  }
  const varied = generateSyntheticDataset({
    randomSeed: 7,
    numDatasetEntries: 500,
    sessionTurnsMean: 5,
    sessionTurnsStddev: 2,
  });
  const counts = varied.conversations.map((c) => c.turns.length);
  assert.ok(counts.every((n) => n >= 1));
  assert.ok(Math.abs(mean(counts) - 5.5) < 0.3, `mean turns ${mean(counts)}`);
  assert.equal(
    varied.turnCount,
    counts.reduce((a, b) => a + b, 0),
  );
});

test('seq-dist mixes (ISL, OSL) pairs by percent', () => {
  const dataset = generateSyntheticDataset({
    randomSeed: 3,
    numDatasetEntries: 2000,
    seqDist: '100,10:25;2000|0,300:75',
  });
  const pairs = allTurns(dataset).map((t) => `${synthetic(t).inputLength},${t.maxTokens}`);
  assert.deepEqual(new Set(pairs), new Set(['100,10', '2000,300']));
  const share = pairs.filter((p) => p === '100,10').length / pairs.length;
  assert.ok(Math.abs(share - 0.25) < 0.03, `share ${share}`);
});

test('seq-dist parsing and its errors', () => {
  assert.deepEqual(parseSeqDist(' 512|50, 128 : 60 ; 64,8|2:40 '), [
    { isl: 512, islStddev: 50, osl: 128, oslStddev: 0, percent: 60 },
    { isl: 64, islStddev: 0, osl: 8, oslStddev: 2, percent: 40 },
  ]);
  for (const bad of ['', '100,10', '100:50;200,5:50', '100,10:60;200,5:30', 'a,10:100', '100|-1,10:100']) {
    assert.throws(() => parseSeqDist(bad), SyntheticOptionError, bad);
  }
});

test('prefix pool: first turns share a byte-identical prefix of whole 16-token blocks', () => {
  const dataset = generateSyntheticDataset({
    randomSeed: 5,
    numDatasetEntries: 60,
    numPrefixPrompts: 3,
    prefixPromptLength: 100,
    isl: 50,
    sessionTurnsMean: 2,
  });
  const firsts = dataset.conversations.map((c) => synthetic(c.turns[0]));
  const prefixes = new Set(firsts.map((p) => JSON.stringify(p.hashIds)));
  assert.equal(prefixes.size, 3);
  for (const p of firsts) {
    assert.equal(p.inputLength, 150);
    assert.equal(p.hashIds.length, 6);
    const k = (p.hashIds[0]! - PREFIX_POOL_ID_BASE) / 6;
    assert.ok(Number.isInteger(k) && k >= 0 && k < 3);
    assert.deepEqual(
      p.hashIds,
      [0, 1, 2, 3, 4, 5].map((j) => PREFIX_POOL_ID_BASE + k * 6 + j),
    );
  }
  assert.ok(dataset.conversations.every((c) => synthetic(c.turns[1]).hashIds.length === 0));
  assert.ok(dataset.conversations.every((c) => synthetic(c.turns[1]).inputLength === 50));
  // The prompt stage turns equal ids into equal text: same prefix id list → same leading bytes.
  const store = new BlockStore([' a', ' b', ' c', ' d'], 5);
  const text = (ids: readonly number[]) => ids.map((id) => store.block(id, 16)).join('');
  const sameK = firsts.filter((p) => p.hashIds[0] === firsts[0]!.hashIds[0]);
  assert.ok(sameK.length > 1);
  assert.equal(text(sameK[0]!.hashIds), text(sameK[1]!.hashIds));
});

test('shared system + user context: shared blocks for all, unique blocks per conversation', () => {
  const dataset = generateSyntheticDataset({
    randomSeed: 9,
    numDatasetEntries: 3,
    sharedSystemPromptLength: 40,
    userContextPromptLength: 30,
    isl: 10,
  });
  const firsts = dataset.conversations.map((c) => synthetic(c.turns[0]));
  // 40 shared tokens → 2 whole blocks; 70 tokens → 4 blocks, so 2 per-conversation blocks.
  assert.deepEqual(
    firsts.map((p) => [p.inputLength, p.hashIds]),
    [0, 1, 2].map((i) => [
      80,
      [
        SHARED_SYSTEM_ID_BASE,
        SHARED_SYSTEM_ID_BASE + 1,
        USER_CONTEXT_ID_BASE + 2 * i,
        USER_CONTEXT_ID_BASE + 2 * i + 1,
      ],
    ]),
  );
});

test('bad options name the flag', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ randomSeed: 1.5 }, '--random-seed'],
    [{ randomSeed: 1, numDatasetEntries: 0 }, '--num-dataset-entries'],
    [{ randomSeed: 1, isl: 0 }, '--isl'],
    [{ randomSeed: 1, islStddev: -1 }, '--isl-stddev'],
    [{ randomSeed: 1, seqDist: 'x' }, '--seq-dist'],
    [
      { randomSeed: 1, numPrefixPrompts: 2, prefixPromptLength: 64, sharedSystemPromptLength: 10 },
      '--shared-system-prompt-length',
    ],
  ];
  for (const [options, flag] of cases) {
    assert.throws(
      () => generateSyntheticDataset(options as { randomSeed: number }),
      (err: unknown) => err instanceof SyntheticOptionError && err.option === flag,
      flag,
    );
  }
});

test('positive-integer sampler: round half to even at stddev 0, ceil otherwise, never below 1', () => {
  const random = seededRandom(0, 'test');
  assert.equal(samplePositiveInt(2.5, 0, random), 2);
  assert.equal(samplePositiveInt(3.5, 0, random), 4);
  assert.equal(samplePositiveInt(0.2, 0, random), 1);
  assert.equal(roundHalfEven(-2.5), -2);
  for (let i = 0; i < 1000; i += 1) assert.ok(samplePositiveInt(1, 50, random) >= 1);
});
