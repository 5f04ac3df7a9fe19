/**
 * Issue "Beyond one machine", the local proof: the multi-turn Bailian sample replayed by one run
 * (`runProfile`) against one in-process simulator, and by four shard processes of the built CLI
 * (`--shard-index i --shard-count 4`) against another, all five started together with one
 * `--start-at`. Two shards stream the trace, two load it whole (`--no-trace-streaming`), so both
 * paths are held to the unsharded run. What a user would compare: the request bodies each server
 * received (byte for byte), `inputs.json`, the records' `conversation_id` and `request_scheduled_ns`
 * (as offsets from `--start-at`), and the summaries' `shard` sections. The client warm-up is off to
 * keep the start-ups short (it is not what is compared). A `--start-at`
 * must leave every shard time to start up: on a machine so loaded that a shard was not ready in
 * time (it warns so), the shards run once more with a later start. Nothing compared is a measured
 * time (the offsets are of `request_scheduled_ns`, the schedule, not the send), so the file runs in
 * the parallel group: load only costs it that second start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EpochBase, readRecordLine } from '../../src/export/record-reader.js';
import { mergeShards } from '../../src/merge/merge-run.js';
import { summarize } from '../../src/metrics/summary.js';
import { runProfile } from '../../src/run/profile.js';
import type { ShardSection } from '../../src/shard/start-at.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { builtCli } from '../helpers/built-package.js';
import { type ProcessExit, runNodeProcess } from '../helpers/cli-process.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const SHARDS = 4;
const MODEL = 'Qwen/Qwen3-0.6B';
const SPEEDUP = 60;
const BIN = builtCli();
/** Time for five runs to start up together on a small machine before their start, ms. */
const START_AHEAD_MS = 15_000;
/** What a shard that was not ready by `--start-at` logs. */
const LATE = /passed .* before this run was ready/;

let single: RunningSimulator;
let sharded: RunningSimulator;

/** Two fresh simulators (empty prefix caches), for a first start or a second one. */
async function freshSimulators(): Promise<void> {
  await Promise.all([single?.close(), sharded?.close()]);
  const options = { mode: 'fixed' as const, ttftMs: 1, itlMs: 0, models: [MODEL] };
  [single, sharded] = await Promise.all([
    startSimulator(options, { captureRequests: true }),
    startSimulator(options, { captureRequests: true }),
  ]);
}

before(freshSimulators);

after(async () => {
  await Promise.all([single?.close(), sharded?.close()]);
});

interface Run extends ProcessExit {
  dir: string;
}

/** Runs shard `index` of the trace (the built CLI) into a new folder. */
function shard(index: number, startAtMs: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-shard-'));
  const args = [
    ...[BIN, 'profile', '-m', MODEL, '--url', sharded.url, '--input-file', TRACE],
    ...[
      '--custom-dataset-type',
      'bailian_trace',
      '--synthesis-speedup-ratio',
      String(SPEEDUP),
      '--streaming',
    ],
    ...['--random-seed', '7', '--ui', 'none', '--no-server-metrics', '--client-warmup-ms', '0'],
    ...['--artifact-dir', dir],
    ...['--start-at', new Date(startAtMs).toISOString()],
    ...['--shard-index', String(index), '--shard-count', String(SHARDS)],
    ...(index >= 2 ? ['--no-trace-streaming'] : []),
  ];
  return runNodeProcess(args).then((exit) => ({ ...exit, dir }));
}

/** The unsharded run, in this process, starting at `startAtMs`. */
async function singleRun(startAtMs: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-shard-single-'));
  let stderr = '';
  const log = (m: string): void => {
    stderr += `${m}\n`;
  };
  const outcome = await runProfile(
    {
      models: [MODEL],
      url: single.url,
      inputFile: TRACE,
      customDatasetType: 'bailian_trace',
      synthesisSpeedupRatio: SPEEDUP,
      streaming: true,
      randomSeed: 7,
      ui: 'none',
      serverMetrics: false,
      clientWarmupMs: 0,
      artifactDir: dir,
      startAtMs,
    },
    { log: { info: log, warn: log }, stopSignal: new AbortController().signal },
  );
  return { code: outcome.status.exit_code, stdout: outcome.consoleText, stderr, dir };
}

/**
 * The unsharded run and the four shards, started together on one `--start-at`; once more with a
 * later start (against fresh simulators) when one was not ready in time. `from`: the sharded
 * simulator's first request of it.
 */
async function allRuns(): Promise<{ runs: [Run, ...Run[]]; startAtMs: number; from: [number, number] }> {
  for (const aheadMs of [START_AHEAD_MS, 3 * START_AHEAD_MS]) {
    // A second start meets servers whose caches the first warmed: each reports more than the ideal.
    if (aheadMs > START_AHEAD_MS) await freshSimulators();
    const from: [number, number] = [single.capturedRequests().length, sharded.capturedRequests().length];
    const startAtMs = Date.now() + aheadMs;
    const runs = await Promise.all([
      singleRun(startAtMs),
      ...Array.from({ length: SHARDS }, (_, i) => shard(i, startAtMs)),
    ]);
    if (runs.every((r) => !LATE.test(r.stderr)) || aheadMs > START_AHEAD_MS) return { runs, startAtMs, from };
  }
  throw new Error('unreachable');
}

interface Sent {
  key: string;
  conversationId: string;
  scheduledNs: bigint;
}

function records(dir: string): Sent[] {
  return readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const m = JSON.parse(line) as {
        metadata: { conversation_id: string; turn_index: number };
        error: unknown;
      };
      assert.equal(m.error, null, line);
      const scheduled = /"request_scheduled_ns":(\d+)/.exec(line)?.[1];
      assert.ok(scheduled !== undefined, line);
      const { conversation_id: conversationId, turn_index: turn } = m.metadata;
      return { key: `${conversationId}/${turn}`, conversationId, scheduledNs: BigInt(scheduled) };
    });
}

/** `inputs.json` as session id → its request bodies (entries of one session merged, in order). */
function inputs(dir: string): Map<string, unknown[]> {
  const data = (
    JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')) as {
      data: Array<{ session_id: string; payloads: unknown[] }>;
    }
  ).data;
  const out = new Map<string, unknown[]>();
  for (const d of data) out.set(d.session_id, [...(out.get(d.session_id) ?? []), ...d.payloads]);
  return out;
}

function shardSection(dir: string): ShardSection {
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
    shard?: ShardSection;
  };
  assert.ok(summary.shard !== undefined, 'summary has a shard section');
  return summary.shard;
}

test('4 shards started at one --start-at send exactly the unsharded run: sessions, bodies, scheduled offsets', async () => {
  const { runs, startAtMs, from } = await allRuns();
  for (const r of runs) assert.equal(r.code, 0, r.stderr);
  for (const r of runs) assert.doesNotMatch(r.stderr, LATE);
  const [whole, ...shards] = runs;

  // The same bodies reached the servers, byte for byte.
  const bodies = (sim: RunningSimulator, start = 0): string[] =>
    sim
      .capturedRequests()
      .slice(start)
      .map((c) => c.body)
      .sort();
  assert.equal(bodies(single, from[0]).length, 40);
  assert.deepEqual(bodies(sharded, from[1]), bodies(single, from[0]));

  // Every session was sent by exactly one shard, all its turns; the union is the unsharded run's.
  const wholeRecords = records(whole.dir);
  const shardRecords = shards.map((s) => records(s.dir));
  const owner = new Map<string, number>();
  shardRecords.forEach((list, i) => {
    for (const r of list) {
      assert.equal(owner.get(r.conversationId) ?? i, i, `session ${r.conversationId} spans shards`);
      owner.set(r.conversationId, i);
    }
  });
  assert.deepEqual(
    shardRecords
      .flat()
      .map((r) => r.key)
      .sort(),
    wholeRecords.map((r) => r.key).sort(),
  );
  assert.ok(
    shardRecords.every((list) => list.length > 0),
    'every shard sent something',
  );

  // Each session's bodies (inputs.json) are the unsharded run's, turn by turn.
  const wholeInputs = inputs(whole.dir);
  const shardInputs = new Map(shards.flatMap((s) => [...inputs(s.dir)]));
  assert.deepEqual(new Set(shardInputs.keys()), new Set(wholeInputs.keys()));
  for (const [session, payloads] of wholeInputs)
    assert.deepEqual(shardInputs.get(session), payloads, session);

  // Each request was scheduled at the same offset from its run's --start-at (to the µs the ns
  // conversion rounds).
  const alone = shardSection(whole.dir);
  const offsets = (list: Sent[], atMs: number): Map<string, bigint> =>
    new Map(list.map((r) => [r.key, r.scheduledNs - BigInt(atMs) * 1_000_000n]));
  const wholeOffsets = offsets(wholeRecords, startAtMs);
  for (const [key, offset] of offsets(shardRecords.flat(), startAtMs)) {
    const diff = offset - (wholeOffsets.get(key) as bigint);
    assert.ok(diff <= 1000n && diff >= -1000n, `${key}: offset ${offset} vs ${wholeOffsets.get(key)} ns`);
  }

  // The summaries say who ran what, when, and against which clock.
  assert.deepEqual(
    [alone.index, alone.count, alone.start_at_ms, alone.session_hash],
    [0, 1, startAtMs, 'fnv1a64'],
  );
  const sections = shards.map((s) => shardSection(s.dir));
  sections.forEach((s, i) => {
    assert.deepEqual([s.index, s.count, s.start_at_ms, s.session_hash], [i, SHARDS, startAtMs, 'fnv1a64']);
    assert.equal(s.start_at, new Date(startAtMs).toISOString());
    assert.equal(s.requests, shardRecords[i]?.length);
    assert.equal(typeof s.first_send_skew_ms, 'number');
    assert.ok(s.clock !== null && s.clock.uncertainty_ms >= 0, JSON.stringify(s.clock));
    assert.equal(s.clock.reference, sharded.url);
    assert.match(
      shards[i]?.stdout ?? '',
      new RegExp(`Shard ${i} of ${SHARDS} \\(0-based\\): ${s.requests} requests`),
    );
  });
  assert.equal(
    sections.reduce((n, s) => n + s.sessions, 0),
    alone.sessions,
  );
  assert.equal(alone.sessions, wholeInputs.size);

  // `tokenload merge` of the 4 shards: every metric as the single-run summary code computes it from
  // the shards' records concatenated.
  const merged = mkdtempSync(join(tmpdir(), 'tokenload-shard-merged-'));
  const outcome = await mergeShards({ shardDirs: shards.map((s) => s.dir), artifactDir: merged });
  assert.equal(outcome.status.status, 'completed');
  const time = new EpochBase();
  const lines = shards.flatMap((s) =>
    readFileSync(join(s.dir, 'profile_export.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== ''),
  );
  const reference = summarize(lines.map((l) => readRecordLine(l, { time, streaming: true })));
  const mergedSummary = JSON.parse(readFileSync(join(merged, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(reference.totals.validCount, 40);
  // Except the ideal prefix cache: the merge's is over every shard's requests (merge/merged-ideal.ts),
  // each shard's own over its requests alone, so the merged ideal holds at least as much.
  for (const [tag, value] of Object.entries(reference.metrics))
    if (tag !== 'ideal_cached_tokens') assert.deepEqual(mergedSummary[tag], value, tag);
  const mergedCache = mergedSummary.cache_check as { ideal_cached_tokens: number; over_reported: number };
  assert.ok(mergedCache.ideal_cached_tokens >= (reference.cacheCheck?.ideal_cached_tokens ?? 0));
  assert.equal(mergedCache.over_reported, 0);
  assert.deepEqual(mergedSummary.shards.missing, []);
  assert.equal(mergedSummary.shards.merged, SHARDS);
});
