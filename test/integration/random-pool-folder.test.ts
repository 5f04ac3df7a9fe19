/**
 * `random_pool` from a folder (AIPerf's custom-dataset tutorial): each `*.jsonl` file is a named
 * pool, and each conversation takes one entry from each pool. Through the CLI against the simulator:
 * a chat request carries the entries' texts as text parts of one user message, in pool-name order;
 * a rankings request takes its query and passages from the pools named `query` and `passages`;
 * `--conversation-num` requests are sent, and the same seed sends the same requests.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const QUERIES = ['What is your refund policy?', 'How do I reset my password?', 'Where is my order?'];
const PASSAGES = [
  'Refunds are processed within 5 business days.',
  "Click 'Forgot password' on the login page.",
];
let sim: RunningSimulator;
let work = '';
let folder = '';

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  work = mkdtempSync(join(tmpdir(), 'tokenload-pools-'));
  folder = join(work, 'pools');
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'query.jsonl'),
    `${QUERIES.map((text) => JSON.stringify({ text })).join('\n')}\n`,
  );
  writeFileSync(
    join(folder, 'passages.jsonl'),
    `${PASSAGES.map((text) => JSON.stringify({ text })).join('\n')}\n`,
  );
  writeFileSync(join(folder, 'notes.txt'), 'not a pool: only *.jsonl files are\n');
});
after(async () => {
  await sim?.close();
});

async function bodiesOf(name: string, extra: string[]): Promise<Array<Record<string, unknown>>> {
  const seen = sim.capturedRequests().length;
  const dir = join(work, name);
  const r = await runCliInProcess([
    'profile',
    '-m',
    MODEL,
    '--url',
    sim.url,
    '--input-file',
    folder,
    '--custom-dataset-type',
    'random_pool',
    '--conversation-num',
    '6',
    '--concurrency',
    '2',
    '--random-seed',
    '42',
    '--tokenizer',
    'builtin',
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
    ...extra,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const { records, summary } = readRunArtifacts<{ request_count: { avg: number } }>(dir);
  assert.equal(records.length, 6);
  assert.equal(summary.request_count.avg, 6);
  const bodies = sim
    .capturedRequests()
    .slice(seen)
    .filter((c) => c.path !== '/v1/models')
    .map((c) => JSON.parse(c.body) as Record<string, unknown>);
  assert.equal(bodies.length, 6);
  return bodies;
}

test('chat: one user message of text parts, one entry of each pool in pool-name order', async () => {
  const bodies = await bodiesOf('chat', []);
  for (const body of bodies) {
    const messages = body.messages as Array<{ role: string; content: Array<{ type: string; text: string }> }>;
    assert.equal(messages.length, 1);
    assert.equal(messages[0]?.role, 'user');
    const parts = messages[0]?.content ?? [];
    assert.deepEqual(
      parts.map((p) => p.type),
      ['text', 'text'],
    );
    assert.ok(PASSAGES.includes(parts[0]?.text ?? ''), `passages pool first: ${parts[0]?.text}`);
    assert.ok(QUERIES.includes(parts[1]?.text ?? ''), `query pool second: ${parts[1]?.text}`);
  }
  // The same seed draws the same requests.
  const again = await bodiesOf('chat-again', []);
  const key = (bs: Array<Record<string, unknown>>) => bs.map((b) => JSON.stringify(b.messages)).sort();
  assert.deepEqual(key(again), key(bodies));
});

test('rankings: the pools named query and passages are the query and the passages', async () => {
  const bodies = await bodiesOf('rankings', ['--endpoint-type', 'cohere_rankings']);
  for (const body of bodies) {
    assert.ok(QUERIES.includes(body.query as string), String(body.query));
    const documents = body.documents as string[];
    assert.equal(documents.length, 1);
    assert.ok(PASSAGES.includes(documents[0] as string));
  }
});
