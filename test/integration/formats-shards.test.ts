/**
 * Issue #29 item 8, formats and shards that cannot be confused. A trace read under another format
 * than its own is refused (profile, analyze-trace, the Mooncake loader through the package API),
 * naming the file, the fields seen and the right `--custom-dataset-type`; timestamps implausible
 * for the format's unit are warned about at a run's start (judged on the schedule replayed after
 * `--synthesis-speedup-ratio`) and by analyze-trace (on the file). Shards of one run
 * (two `runProfile` shards at once against one spawned simulator) merge without the false
 * warm-cache and clock-offset warnings; a shard of a run with another trace or another model is
 * refused by `tokenload merge`, naming the shard and what differs; a clock offset beyond its
 * uncertainty still warns. The 16-row trace has four shared prefixes (4 blocks each), so that each
 * shard alone takes the other's first sends of a prefix for a cache left warm.
 */
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { getDatasetLoader } from '../../src/dataset/registry.js';
import { mergeShards } from '../../src/merge/merge-run.js';
import { runProfile } from '../../src/run/profile.js';
import { type SpawnedSimulator, spawnSimulator } from '../../src/simulator/spawn.js';
import { builtCli } from '../helpers/built-package.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { runNodeProcess } from '../helpers/cli-process.js';
import { patchShard } from '../helpers/shard-folders.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const OTHER_MODEL = 'Qwen/Qwen3-1.7B';
const SILENT = { info: () => undefined, warn: () => undefined };

let root: string;
let sim: SpawnedSimulator;
/** The Bailian trace (seconds), and the same rows with the timestamps in ms. */
let trace: string;
let traceMs: string;
/** Shards 0 and 1 of one run. */
let shards: [string, string];

type Json = Record<string, unknown>;
const readJson = (file: string): Json => JSON.parse(readFileSync(file, 'utf8')) as Json;

/**
 * 16 single-turn sessions, 0.25 s apart (timestamps × `scale`: 1 in seconds, 1000 written in ms);
 * session i starts with prefix i % 4 (4 blocks), then 2 blocks of its own.
 */
function bailianRows(scale: number): string {
  const rows = Array.from({ length: 16 }, (_, i) => {
    const g = i % 4;
    const hashIds = [0, 1, 2, 3].map((b) => g * 100 + b).concat([1000 + 2 * i, 1001 + 2 * i]);
    return JSON.stringify({
      chat_id: i + 1,
      parent_chat_id: -1,
      timestamp: i * 0.25 * scale,
      input_length: 96,
      output_length: 4,
      type: 'text',
      turn: 1,
      hash_ids: hashIds,
    });
  });
  return `${rows.join('\n')}\n`;
}

/** A run's configuration against the test's simulator; `overrides` last. */
function shardConfig(dir: string, index: number, overrides: Json = {}): Json {
  return {
    models: [MODEL],
    url: [sim.url],
    inputFile: trace,
    customDatasetType: 'bailian_trace',
    synthesisSpeedupRatio: 10,
    streaming: true,
    randomSeed: 7,
    ui: 'none',
    serverMetrics: false,
    clientWarmupMs: 0,
    artifactDir: dir,
    shardIndex: index,
    shardCount: 2,
    ...overrides,
  };
}

/**
 * Shard `index` of the test's run as a process of the built CLI, as shards run (two runs in one
 * process share its client, which real shards never do).
 */
async function shardProcess(name: string, index: number): Promise<string> {
  const dir = join(root, name);
  const r = await runNodeProcess([
    ...[builtCli(), 'profile', '-m', MODEL, '--url', sim.url, '--input-file', trace],
    ...['--custom-dataset-type', 'bailian_trace', '--synthesis-speedup-ratio', '10', '--streaming'],
    ...['--random-seed', '7', '--ui', 'none', '--no-server-metrics', '--client-warmup-ms', '0'],
    ...['--artifact-dir', dir, '--shard-index', String(index), '--shard-count', '2'],
  ]);
  assert.equal(r.code, 0, r.stderr);
  return dir;
}

/** A shard of another run, in this process. */
async function runShard(name: string, index: number, overrides: Json = {}) {
  const dir = join(root, name);
  const outcome = await runProfile(shardConfig(dir, index, overrides) as { models: string[] }, {
    log: SILENT,
    stopSignal: new AbortController().signal,
  });
  assert.equal(outcome.status.status, 'completed', `${name}: ${outcome.status.reason}`);
  return dir;
}

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tokenload-formats-shards-'));
  trace = join(root, 'bailian.jsonl');
  traceMs = join(root, 'bailian-ms.jsonl');
  writeFileSync(trace, bailianRows(1));
  writeFileSync(traceMs, bailianRows(1000));
  sim = await spawnSimulator({
    mode: 'fixed',
    ttftMs: 1,
    itlMs: 0,
    warmupMs: 0,
    models: [MODEL, OTHER_MODEL],
  });
  // The two shards of one run, at once (no --start-at: they start together here).
  shards = (await Promise.all([shardProcess('shard-0', 0), shardProcess('shard-1', 1)])) as [string, string];
});
after(async () => {
  await sim?.close();
  rmSync(root, { recursive: true, force: true });
});

test('a Bailian trace declared mooncake_trace (and other mix-ups) is refused, naming the file, fields and right type', async () => {
  const out = join(root, 'refused');
  const r = await runCliInProcess([
    ...['profile', '-m', MODEL, '--url', sim.url, '--input-file', trace],
    ...['--custom-dataset-type', 'mooncake_trace', '--ui', 'none', '--no-server-metrics'],
    ...['--client-warmup-ms', '0', '--artifact-dir', out],
  ]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, new RegExp(`${trace}:1: --custom-dataset-type mooncake_trace does not fit`));
  assert.match(r.stderr, /chat_id, parent_chat_id, timestamp/);
  assert.match(r.stderr, /1,000× too fast/);
  assert.match(r.stderr, /Give --custom-dataset-type bailian_trace/);

  const mooncake = join(root, 'mooncake.jsonl');
  writeFileSync(
    mooncake,
    `${JSON.stringify({ timestamp: 0, input_length: 600, output_length: 4, hash_ids: [1, 2] })}\n`,
  );
  const m = await runCliInProcess(['analyze-trace', mooncake, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(m.code, 2, m.stderr);
  assert.match(
    m.stderr,
    /the fields timestamp, input_length, output_length, hash_ids, which is mooncake_trace/,
  );
  assert.match(m.stderr, /Give --custom-dataset-type mooncake_trace/);

  const burst = join(root, 'burst.csv');
  writeFileSync(
    burst,
    'Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n0,ChatGPT,10,5,15,Conversation log\n',
  );
  const b = await runCliInProcess(['analyze-trace', burst, '--custom-dataset-type', 'azure_trace']);
  assert.equal(b.code, 2, b.stderr);
  assert.match(b.stderr, /the CSV columns Timestamp,Model,Request tokens.*which is burst_gpt_trace/);

  // Through the package API, the Mooncake loader itself names the Bailian field, not the block size.
  await assert.rejects(getDatasetLoader('mooncake_trace').load(trace, { blockSize: 16 }), (err: Error) => {
    assert.match(err.message, /:1: field "chat_id": a Bailian row/);
    assert.match(err.message, /give --custom-dataset-type bailian_trace/);
    assert.doesNotMatch(err.message, /wrong block size/);
    return true;
  });
});

test('Bailian timestamps written in ms: a run warns with rows, span and median gap of the schedule it replays; merge refuses it beside a shard of the seconds trace', async () => {
  // A ratio too small for ms: the warning judges the replayed gaps and names the ratio that fits.
  // Only the row at 0 is sent (--fixed-schedule-end-offset 0): the warning reads the file's head.
  const slow = join(root, 'ms-slow');
  // `overrides` come last: this run is not a shard.
  const unsharded = shardConfig(slow, 0, {
    ...{ inputFile: traceMs, synthesisSpeedupRatio: 2, fixedScheduleEndOffsetMs: 0 },
    ...{ shardIndex: undefined, shardCount: undefined },
  });
  await runProfile(unsharded as { models: string[] }, {
    log: SILENT,
    stopSignal: new AbortController().signal,
  });
  const warnings = readJson(join(slow, 'profile_export_aiperf.json')).warnings as string[];
  const unit = warnings.filter((w) => w.includes('bailian_trace timestamps are seconds'));
  assert.equal(unit.length, 1, warnings.join('\n'));
  assert.match(
    unit[0] as string,
    /16 timestamped rows \(in the first MiB of the file\) span \d+ s once replayed at --synthesis-speedup-ratio 2 /,
  );
  assert.match(unit[0] as string, /median gap of \d+ s between rows/);
  assert.match(unit[0] as string, /give --synthesis-speedup-ratio 2000\.$/);
  // The run: shard 1 of another run, with a ratio that makes the ms a plausible schedule: no warning.
  const dir = await runShard('ms-shard', 1, { inputFile: traceMs, synthesisSpeedupRatio: 10_000 });
  const fast = readJson(join(dir, 'profile_export_aiperf.json')).warnings as string[];
  assert.ok(!fast.some((w) => w.includes('timestamps are seconds')), fast.join('\n'));
  // Its own trace (seconds) gets no such warning.
  const own = readJson(join(shards[1], 'profile_export_aiperf.json')).warnings as string[];
  assert.ok(!own.some((w) => w.includes('timestamps are seconds')), own.join('\n'));

  // Another trace: refused by merge, naming the shard and both inputs.
  const out = join(root, 'merged-other-trace');
  const refused = await runCliInProcess(['merge', shards[0], dir, '--artifact-dir', out]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /shard 1 \(.*ms-shard\) replayed another input than shard 0/);
  assert.match(refused.stderr, /bailian\.jsonl .* vs .*bailian-ms\.jsonl/);
});

test('analyze-trace prints the unit warning for ms-valued Bailian timestamps only', async () => {
  const { analyzeTrace } = await import('../../src/analyze/analyze-trace.js');
  const ms = await analyzeTrace(traceMs, { datasetType: 'bailian_trace' });
  assert.match(ms.timeUnitWarning ?? '', /16 timestamped rows \(all rows\) span \d+ s \(/);
  assert.match(ms.timeUnitWarning ?? '', /divide them by 1000, or give --synthesis-speedup-ratio 1000\.$/);
  const s = await analyzeTrace(trace, { datasetType: 'bailian_trace' });
  assert.equal(s.timeUnitWarning, null);
});

test('two shards of one run merge clean: no warm-cache warning, no clock warning, the whole-file sections kept; a shard of another model is refused', async () => {
  const perShard = shards.map((d) => readJson(join(d, 'profile_export_aiperf.json')));
  // Each shard alone takes the other's first sends of a shared prefix for a warm cache.
  const overAlone = perShard.reduce((n, s) => n + ((s.cache_check as Json).over_reported as number), 0);
  assert.ok(overAlone >= 2, `each shard alone over-reports: ${overAlone}`);
  for (const s of perShard) assert.ok((s.shard as Json).clock !== null, 'the clock offset was measured');

  const out = join(root, 'merged');
  const merged = await mergeShards({ shardDirs: shards, artifactDir: out });
  assert.equal(merged.status.status, 'completed');
  const summary = readJson(join(out, 'profile_export_aiperf.json'));
  assert.equal((summary.cache_check as Json).over_reported, 0);
  assert.ok(((summary.cache_check as Json).reported_cached_tokens as number) > 0);
  assert.doesNotMatch(merged.consoleText, /prefix cache was probably left warm/);
  assert.doesNotMatch(merged.consoleText, /clock is .* off the reference/);
  assert.doesNotMatch(merged.consoleText, /cache check is not judged/);
  assert.match(merged.consoleText, /clock offset -?[\d.]+ ms ± [\d.]+ ms/);
  // What every shard computed over the whole file is the merged run's too.
  assert.equal((summary.trace_check as Json).rows, 16);
  for (const section of ['trace_check', 'input_rows_skipped']) {
    assert.notEqual(perShard[0]?.[section], undefined, section);
    assert.deepEqual(summary[section], perShard[0]?.[section], section);
  }

  // Shard 1 of a run with another model.
  const other = await runShard('other-model', 1, { models: [OTHER_MODEL] });
  const refused = await runCliInProcess([
    'merge',
    shards[0],
    other,
    '--artifact-dir',
    join(root, 'merged-model'),
  ]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /shard 1 \(.*other-model\) differs from shard 0 .* in the options that decide what is sent: models \["Qwen\/Qwen3-0\.6B"\] vs \["Qwen\/Qwen3-1\.7B"\]/,
  );
});

test('a shard clock offset beyond twice its uncertainty warns, with the uncertainty; one inside it does not', async () => {
  const copies = shards.map((d, i) => {
    const copy = join(root, `clock-${i}`);
    cpSync(d, copy, { recursive: true });
    return copy;
  });
  const clock = (offset: number, uncertainty: number) => ({
    offset_ms: offset,
    uncertainty_ms: uncertainty,
    basis: 'test',
    reference: sim.url,
  });
  patchShard(copies[1] as string, { shard: { clock: clock(-18.9, 14) } });
  const inside = await mergeShards({ shardDirs: copies, artifactDir: join(root, 'clock-inside') });
  assert.doesNotMatch(inside.consoleText, /clock is .* off the reference/);
  patchShard(copies[1] as string, { shard: { clock: clock(80, 3) } });
  const beyond = await mergeShards({ shardDirs: copies, artifactDir: join(root, 'clock-beyond') });
  assert.match(beyond.consoleText, /shard 1's clock is 80 ms \(± 3 ms\) off the reference/);
});
