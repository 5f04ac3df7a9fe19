/**
 * `tokenload merge` of a Bailian tree replay and of shards that spell out a default, through the CLI
 * against one simulator, on `examples/traces/bailian_siblings_demo.jsonl` (sibling follow-ups 2, 3, 4
 * of chat 1, 11 and 12 of chat 10: they share their root's `conversation_id` and `turn_index`) with
 * a third tree, chat 20 with follow-ups 21 and 22, that falls to shard 1 of 2 (the demo's two trees
 * fall to shard 0); every tree starts with the same 10 blocks:
 * - every record names its `inputs.json` session as `session_id` (a branch's `<root>/<chat_id>`);
 * - two shards at one `--start-at`, merged, give the unsharded run's ideal prefix cache;
 * - a shard given `--open-loop-replay` and `--fixed-schedule` (both the default here) merges with one
 *   given neither; one given `--no-open-loop-replay` is refused, naming the option;
 * - a merge that cannot load the input again says the cache check is not judged and gives no
 *   over-the-ideal count (console and `over_reported` null).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const DEMO = 'examples/traces/bailian_siblings_demo.jsonl';

/** Tree 20: a root of the shared 10 blocks and 4 of its own, then two siblings of 2 blocks more each. */
function tree20(): string {
  const root = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 300, 301, 302, 303];
  const row = (chat: number, parent: number, ts: number, hashIds: number[]) =>
    JSON.stringify({
      ...{ chat_id: chat, parent_chat_id: parent, timestamp: ts, input_length: hashIds.length * 16 - 5 },
      ...{ output_length: 40, type: 'text', turn: parent === -1 ? 1 : 2, hash_ids: hashIds },
    });
  return [
    row(20, -1, 0.4, root),
    row(21, 20, 1.2, [...root, 310, 311]),
    row(22, 20, 1.3, [...root, 320, 321]),
  ].join('\n');
}
let sim: RunningSimulator;
let work = '';
let trace = '';

type Json = Record<string, unknown>;
const readJson = (file: string): Json => JSON.parse(readFileSync(file, 'utf8')) as Json;
const cacheCheck = (dir: string): Json =>
  readJson(join(dir, 'profile_export_aiperf.json')).cache_check as Json;
const records = (dir: string): Json[] =>
  readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => (JSON.parse(l) as { metadata: Json }).metadata);

/** `tokenload profile` of the demo tree replay into `work/dir`, `extra` flags last. */
async function profile(dir: string, extra: string[]): Promise<string> {
  const out = join(work, dir);
  const r = await runCliInProcess([
    'profile',
    ...['--model', MODEL, '--endpoint-type', 'chat', '--streaming', '--url', sim.url],
    ...['--input-file', trace, '--custom-dataset-type', 'bailian_trace', '--random-seed', '7'],
    ...['--synthesis-speedup-ratio', '10', '--tokenizer', 'builtin', '--client-warmup-ms', '0'],
    ...['--ui', 'none', '--no-server-metrics', '--artifact-dir', out, ...extra],
  ]);
  assert.equal(r.code, 0, r.stderr);
  return out;
}

const shard = (i: number, startAt: string): string[] => [
  ...['--shard-index', String(i), '--shard-count', '2', '--start-at', startAt],
];

let whole = '';
let shards: [string, string, string];

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 20, itlMs: 0, warmupMs: 0, models: [MODEL] });
  work = mkdtempSync(join(tmpdir(), 'tokenload-merge-trees-'));
  trace = join(work, 'siblings.jsonl');
  writeFileSync(trace, `${readFileSync(DEMO, 'utf8').trimEnd()}\n${tree20()}\n`);
  whole = await profile('whole', []);
  const startAt = String(Date.now() + 3000);
  // Shard 0 as the defaults leave it; shard 1 spelling two of them out; shard 1 of another pacing.
  shards = (await Promise.all([
    profile('shard-0', shard(0, startAt)),
    profile('shard-1', [...shard(1, startAt), '--open-loop-replay', '--fixed-schedule']),
    profile('shard-1-closed', [...shard(1, startAt), '--no-open-loop-replay']),
  ])) as [string, string, string];
});
after(async () => {
  await sim?.close();
  rmSync(work, { recursive: true, force: true });
});

test('a tree replay records each request’s inputs.json session; two shards, one spelling out defaults, merge to the unsharded ideal prefix cache', async () => {
  const sessions = new Set(
    (readJson(join(whole, 'inputs.json')).data as { session_id: string }[]).map((s) => s.session_id),
  );
  const meta = records(whole);
  for (const m of meta) assert.ok(sessions.has(m.session_id as string), `${m.session_id} in inputs.json`);
  // Siblings share conversation_id and turn_index, not session_id.
  const keys = new Set(meta.map((m) => `${m.conversation_id}:${m.turn_index}`));
  assert.ok(keys.size < meta.length, 'some records share conversation_id and turn_index');
  assert.equal(new Set(meta.map((m) => `${m.session_id}:${m.turn_index}`)).size, meta.length);

  // Shard 1 was given --open-loop-replay --fixed-schedule, shard 0 neither: one run all the same.
  const out = join(work, 'merged');
  const r = await runCliInProcess(['merge', shards[0], shards[1], '--artifact-dir', out]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(records(out).length, meta.length);
  const [merged, alone] = [cacheCheck(out), cacheCheck(whole)];
  assert.equal(merged.ideal_prompt_tokens, alone.ideal_prompt_tokens);
  assert.equal(merged.requests_with_ideal, alone.requests_with_ideal);
  assert.equal(merged.ideal_cached_tokens, alone.ideal_cached_tokens);
  assert.equal(typeof merged.over_reported, 'number');
  const console = readFileSync(join(out, 'profile_export_console.txt'), 'utf8');
  assert.doesNotMatch(console, /cache check is not judged/);
});

test('a shard of another pacing (--no-open-loop-replay) is refused, naming the option', async () => {
  const refused = await runCliInProcess([
    ...['merge', shards[0], shards[2], '--artifact-dir', join(work, 'merged-closed')],
  ]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /shard 1 \(.*shard-1-closed\) differs from shard 0 .* in the options that decide what is sent: openLoopReplay absent vs false$/m,
  );
});

test('a merge that cannot load the input again does not judge the cache check and gives no over-the-ideal count', async () => {
  renameSync(trace, `${trace}.moved`);
  try {
    const out = join(work, 'merged-moved');
    const r = await runCliInProcess(['merge', shards[0], shards[1], '--artifact-dir', out]);
    assert.equal(r.code, 0, r.stderr);
    const console = readFileSync(join(out, 'profile_export_console.txt'), 'utf8');
    assert.match(console, /the cache check is not judged: .*could not be loaded again/);
    assert.match(console, /Prefix cache: .*not judged against the ideal/);
    assert.doesNotMatch(console, /\d+ over the ideal/);
    assert.equal(cacheCheck(out).over_reported, null);
  } finally {
    renameSync(`${trace}.moved`, trace);
  }
});
