/**
 * Trace analysis and synthesis on small hand-made traces: the figures a user reads before a replay,
 * and rewritten traces that still load, keep shared prefixes and respect the caps.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { formatAnalysis } from '../../src/analyze/analyze-format.js';
import { analyzeTrace } from '../../src/analyze/analyze-trace.js';
import { SynthesisError, synthesizeTrace } from '../../src/analyze/synthesize-trace.js';
import { idealPrefixHit } from '../../src/dataset/prefix-analysis.js';
import { getDatasetLoader } from '../../src/dataset/registry.js';

const tmp = (): string => mkdtempSync(join(tmpdir(), 'tokenload-analyze-'));

function writeJsonl(rows: object[]): string {
  const file = join(tmp(), 'trace.jsonl');
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}

// Two sessions: chat 1 → chat 2 (two turns), chat 3 alone. 16-token blocks.
const BAILIAN = [
  {
    chat_id: 1,
    parent_chat_id: -1,
    timestamp: 1.0,
    input_length: 40,
    output_length: 10,
    type: 'text',
    turn: 1,
    hash_ids: [1, 2, 3],
  },
  {
    chat_id: 3,
    parent_chat_id: -1,
    timestamp: 2.0,
    input_length: 20,
    output_length: 30,
    type: 'search',
    turn: 1,
    hash_ids: [7, 8],
  },
  {
    chat_id: 2,
    parent_chat_id: 1,
    timestamp: 5.0,
    input_length: 64,
    output_length: 20,
    type: 'text',
    turn: 2,
    hash_ids: [1, 2, 3, 4],
  },
];

test('analyze-trace: rows, sessions by turn count, span, rate, ISL/OSL, type mix, ideal prefix hit', async () => {
  const a = await analyzeTrace(writeJsonl(BAILIAN), { datasetType: 'bailian_trace' });
  assert.equal(a.rows, 3);
  assert.equal(a.sessions, 2);
  assert.deepEqual(a.turnHistogram, [
    { turns: 1, sessions: 1 },
    { turns: 2, sessions: 1 },
  ]);
  assert.equal(a.spanS, 4);
  assert.equal(a.meanArrivalRatePerS, 0.75);
  const isl = a.isl!;
  assert.deepEqual([isl.count, isl.min, isl.p50, isl.max], [3, 20, 40, 64]);
  assert.ok(
    Math.abs(isl.p90 - 59.2) < 1e-9 &&
      Math.abs(isl.p99 - 63.52) < 1e-9 &&
      Math.abs(isl.mean - 124 / 3) < 1e-9,
  );
  assert.equal(a.osl?.max, 30);
  assert.deepEqual(a.typeMix, [
    { type: 'text', rows: 2 },
    { type: 'search', rows: 1 },
  ]);
  // Chat 2 re-uses blocks 1,2,3 of chat 1, which sent block 3 partial (40 tokens = 16 + 16 + 8): an
  // ideal cache holds only the 40 tokens sent, and id 3 appeared at two sizes (8, then 16).
  assert.equal(a.prefix.hitBlocks, 3);
  assert.equal(a.prefix.hitTokens, BAILIAN[0]?.input_length);
  assert.equal(a.prefix.sizeConflictIds, 1);
  const text = formatAnalysis(a);
  assert.match(text, /Rows: 3 {3}Sessions: 2/);
  assert.match(text, /Sessions by turn count \(turns: sessions\): 1: 1, 2: 1/);
  assert.match(text, /Mean arrival rate: 0\.75 requests\/s/);
  assert.match(text, /Ideal prefix hit \(infinite cache\): 32\.3% of prompt tokens \(40 \/ 124\)/);
  assert.match(text, /Warning: 1 hash_id appeared with two different block sizes; check --isl-block-size/);
});

test('synthesize-trace (Bailian): timestamps ÷ speedup, lengths × multipliers, output loads and keeps its prefix hit', async () => {
  const out = join(tmp(), 'out.jsonl');
  const r = await synthesizeTrace(writeJsonl(BAILIAN), out, {
    datasetType: 'bailian_trace',
    speedupRatio: 4,
    prefixLenMultiplier: 2,
    promptLenMultiplier: 2,
    outputLenMultiplier: 1.5,
  });
  assert.deepEqual([r.rowsIn, r.rowsOut, r.droppedOverMaxIsl], [3, 3, 0]);
  // Ids 1, 2, 3 are shared. Chat 1: prefix 1, 2 (its block 3 is partial) → 4 blocks, and its 8 other
  // tokens → 16 (one block of its own). Chat 3: no prefix, 20 → 40 tokens. Chat 2: prefix 1, 2, 3 →
  // 6 blocks, its 16 other tokens → 32.
  const rows = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    rows.map((x) => [
      x.chat_id,
      x.parent_chat_id,
      x.timestamp,
      x.input_length,
      x.output_length,
      x.hash_ids.length,
      x.type,
    ]),
    [
      [1, -1, 0.25, 80, 15, 5, 'text'],
      [3, -1, 0.5, 40, 45, 3, 'search'],
      [2, 1, 1.25, 128, 30, 8, 'text'],
    ],
  );
  assert.deepEqual(Object.keys(rows[0]), Object.keys(BAILIAN[0]!), 'same fields, same order');
  const dataset = await getDatasetLoader('bailian_trace').load(out, {});
  assert.equal(dataset.conversations.length, 2);
  // The follow-up turn re-uses the stretched prefix it shares with its parent (ids 1, 2): 4 blocks.
  assert.equal(idealPrefixHit(dataset).hitBlocks, 4);
});

test('synthesize-trace (Mooncake): max ISL drops rows (checked on the trace value), max OSL caps after scaling', async () => {
  const file = writeJsonl([
    { timestamp: 1000, input_length: 600, output_length: 100, hash_ids: [0, 1] },
    { timestamp: 3000, input_length: 5000, output_length: 10, hash_ids: [0, 2, 3, 4, 5, 6, 7, 8, 9, 10] },
    { delay: 500, text_input: 'hello', output_length: 400 },
  ]);
  const out = join(tmp(), 'out.jsonl');
  const r = await synthesizeTrace(file, out, {
    datasetType: 'mooncake_trace',
    speedupRatio: 10,
    promptLenMultiplier: 2,
    maxIsl: 4096,
    maxOsl: 300,
  });
  assert.deepEqual(r, {
    output: out,
    rowsIn: 3,
    rowsOut: 2,
    droppedOverMaxIsl: 1,
    oslCapped: 1,
    promptUnscaled: 1,
  });
  const rows = readFileSync(out, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  // 600 tokens = one whole 512-token block and 88: ×2 = two whole blocks (new ids of block 0) and 176.
  const { hash_ids: ids, ...rest } = rows[0];
  assert.deepEqual(rest, { timestamp: 100, input_length: 1200, output_length: 100 });
  assert.equal(new Set(ids).size, 3);
  assert.deepEqual(rows[1], { delay: 500, text_input: 'hello', output_length: 300 });
  await getDatasetLoader('mooncake_trace').load(out, {});
});

test('synthesize-trace rejects bad options and names a malformed row by file and line', async () => {
  const file = writeJsonl(BAILIAN);
  const out = join(tmp(), 'out.jsonl');
  await assert.rejects(
    synthesizeTrace(file, out, { datasetType: 'bailian_trace', speedupRatio: 0 }),
    SynthesisError,
  );
  await assert.rejects(synthesizeTrace(file, out, { datasetType: 'random' }), /unknown dataset type/);
  const bad = writeJsonl([BAILIAN[0]!, { chat_id: 9, timestamp: 1 }]);
  await assert.rejects(
    synthesizeTrace(bad, out, { datasetType: 'bailian_trace' }),
    /trace\.jsonl:2.*input_length/,
  );
});

test('Mooncake: a whole-file load with synthesis gives the turns its synthesize-trace output gives loaded plain', async () => {
  // Two sessions sharing a 2-block prefix, a row of their own, a fresh tail, a text row.
  const file = writeJsonl([
    { session_id: 'a', timestamp: 0, input_length: 1100, output_length: 50, hash_ids: [1, 2, 3] },
    { session_id: 'b', timestamp: 10, input_length: 1024, output_length: 80, hash_ids: [1, 2] },
    { session_id: 'a', timestamp: 20, input_length: 1600, output_length: 60, hash_ids: [1, 2, 3, 4] },
    { timestamp: 30, input_length: 2000, output_length: 10, hash_ids: [1] },
    { session_id: 'c', timestamp: 40, text_input: 'hello', output_length: 90 },
  ]);
  const synthesis = {
    prefixLenMultiplier: 1.5,
    prefixRootMultiplier: 3,
    promptLenMultiplier: 1.25,
    outputLenMultiplier: 1.5,
    maxOsl: 100,
  };
  const out = join(tmp(), 'out.jsonl');
  const r = await synthesizeTrace(file, out, {
    datasetType: 'mooncake_trace',
    speedupRatio: 3,
    ...synthesis,
  });
  assert.deepEqual([r.rowsOut, r.oslCapped, r.promptUnscaled], [5, 2, 1]);
  const loader = getDatasetLoader('mooncake_trace');
  const direct = await loader.load(file, { speedupRatio: 3, synthesis });
  const replayed = await loader.load(out, {});
  const turns = (d: typeof direct): unknown[] =>
    d.conversations.map((c) => [c.id, c.turns.map((t) => [t.timestampMs, t.prompt, t.maxTokens])]);
  assert.deepEqual(turns(direct), turns(replayed));
  assert.deepEqual(direct.skipped.maxOslCapped, 2);
});
