/**
 * `inputs.json` has one entry per session, its turns in order, in every mode (AIPerf's layout): a
 * multi-turn Bailian trace whose sessions interleave gives the same file streamed and loaded whole,
 * a cycled synthetic dataset lists each session's turns once, and `tokenload merge` of two shards
 * holds each session once. Through `runProfile` and `mergeShards` against the in-process simulator.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { mergeShards } from '../../src/merge/merge-run.js';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const MODEL = 'Qwen/Qwen3-0.6B';
const SILENT = { info: () => undefined, warn: () => undefined };

let sim: RunningSimulator;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-inputs-'));
  dirs.push(dir);
  return dir;
}

async function run(over: Partial<ProfileConfigInput>): Promise<string> {
  const dir = over.artifactDir ?? freshDir();
  const outcome = await runProfile(
    {
      models: [MODEL],
      url: sim.url,
      streaming: true,
      randomSeed: 7,
      ui: 'none',
      serverMetrics: false,
      clientWarmupMs: 0,
      ...over,
      artifactDir: dir,
    },
    { log: SILENT, stopSignal: new AbortController().signal },
  );
  assert.equal(outcome.status.exit_code, 0, outcome.status.reason ?? '');
  return dir;
}

function replay(over: Partial<ProfileConfigInput>): Promise<string> {
  return run({
    inputFile: TRACE,
    customDatasetType: 'bailian_trace',
    synthesisSpeedupRatio: 200,
    ...over,
  });
}

interface Entry {
  session_id: string;
  payloads: Array<{ messages: Array<{ content: string }> }>;
}

function entries(dir: string): Entry[] {
  return (JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as { data: Entry[] }).data;
}

/** Turns recorded per conversation, in the order they were sent. */
function recordedTurns(dir: string): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const line of readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n')) {
    const { conversation_id: id, turn_index: turn } = JSON.parse(line).metadata;
    out.set(id, [...(out.get(id) ?? []), turn]);
  }
  return out;
}

/** Each session once, with as many payloads as turns it sent. */
function assertOneEntryPerSession(dir: string): Entry[] {
  const data = entries(dir);
  const ids = data.map((e) => e.session_id);
  assert.equal(new Set(ids).size, ids.length, `a session id repeats: ${ids.join(' ')}`);
  const turns = recordedTurns(dir);
  assert.deepEqual(new Set(ids), new Set(turns.keys()));
  for (const e of data) {
    const sent = turns.get(e.session_id) ?? [];
    assert.equal(e.payloads.length, new Set(sent).size, `session ${e.session_id}`);
  }
  assert.equal(existsSync(join(dir, 'inputs.json.spool')), false, 'the spool is removed');
  return data;
}

test('a streamed replay and a whole-file load write the same inputs.json: one entry per session, turns in order', async () => {
  const streamed = await replay({ traceStreaming: true });
  const whole = await replay({ traceStreaming: false });
  const data = assertOneEntryPerSession(streamed);
  assert.ok(
    data.some((e) => e.payloads.length > 1),
    'the trace has multi-turn sessions',
  );
  // Sessions interleave in this trace: a session's later turn is sent after another session began.
  const order = [
    ...readFileSync(join(streamed, 'profile_export.jsonl'), 'utf8').matchAll(/"conversation_id":"([^"]+)"/g),
  ].map((m) => m[1]);
  const runs = order.filter((id, i) => i === 0 || order[i - 1] !== id).length;
  assert.ok(runs > new Set(order).size, 'sessions interleave');
  // Turn order: each later turn of a Bailian session repeats the earlier one's prompt as its prefix.
  for (const e of data) {
    const prompts = e.payloads.map((p) => p.messages.map((m) => m.content).join(''));
    for (let i = 1; i < prompts.length; i++)
      assert.ok((prompts[i] as string).length > (prompts[i - 1] as string).length);
  }
  assert.equal(
    readFileSync(join(streamed, 'inputs.json'), 'utf8'),
    readFileSync(join(whole, 'inputs.json'), 'utf8'),
  );
});

test('a cycled synthetic dataset: each session once, its turns once', async () => {
  const dir = await run({
    synthetic: { isl: 16, osl: 2, numDatasetEntries: 2, sessionTurnsMean: 2 },
    concurrency: 2,
    requestCount: 12,
  });
  const data = assertOneEntryPerSession(dir);
  assert.equal(data.length, 2);
  for (const e of data) assert.equal(e.payloads.length, 2, e.session_id);
});

test('tokenload merge of two shards: every session once, the same entries as the unsharded run', async () => {
  const whole = await replay({ traceStreaming: true });
  const shards = [];
  for (const shardIndex of [0, 1]) shards.push(await replay({ shardIndex, shardCount: 2 }));
  const out = freshDir();
  await mergeShards({ shardDirs: shards, artifactDir: out });
  const merged = entries(out);
  const ids = merged.map((e) => e.session_id);
  assert.equal(new Set(ids).size, ids.length, `a session id repeats: ${ids.join(' ')}`);
  const byId = (list: Entry[]) => new Map(list.map((e) => [e.session_id, e.payloads.length]));
  assert.deepEqual(byId(merged), byId(entries(whole)));
});
