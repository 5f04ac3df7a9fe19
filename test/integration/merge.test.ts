/**
 * `tokenload merge` (issue #16 items 2 and 4): one replay of the multi-turn Bailian sample against
 * the built-in simulator (with failed requests, goodput, prefix-cache hits) split by session into
 * shard folders; their merge is the run — the summary the single-run code computes over the
 * concatenated records, and the run's own summary — and a missing, failed or malformed shard is
 * refused by name, or marked partial with --allow-partial.
 */
import assert from 'node:assert/strict';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { EpochBase, readRecordLine } from '../../src/export/record-reader.js';
import { mergeShards } from '../../src/merge/merge-run.js';
import { parseGoodput } from '../../src/metrics/goodput.js';
import { RUN_METRICS } from '../../src/metrics/registry.js';
import { summarize } from '../../src/metrics/summary.js';
import { runProfile } from '../../src/run/profile.js';
import { builtCli } from '../helpers/built-package.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';
import { runNode } from '../helpers/run-node.js';
import { patchShard, splitRunIntoShards } from '../helpers/shard-folders.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';
const GOODPUT = 'time_to_first_token:40 inter_token_latency:8';
const ENTRY = builtCli();
const SILENT = { info: () => undefined, warn: () => undefined };

let root: string;
let runDir: string;
/** The run split into three shard folders, by index. */
let shards: string[];

type Json = Record<string, unknown>;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tokenload-merge-'));
  runDir = join(root, 'run');
  const config = simulatorReplayConfig(runDir, TRACE, 40, {
    commandLine: 'test',
    goodput: GOODPUT,
    serverMetrics: false,
    // A cold start makes the first wave slow: the run notes it, and so must the merge of its shards.
    simulatorOptions: { faultRate500: 0.15, seed: 3, coldStartRequests: 1, coldStartMs: 400 },
  });
  await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  shards = splitRunIntoShards(runDir, 3, join(root, 'shards'));
});
after(() => rmSync(root, { recursive: true, force: true }));

const readJson = (file: string): Json => JSON.parse(readFileSync(file, 'utf8')) as Json;
const linesOf = (file: string): string[] =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '');

/**
 * `tokenload merge <args>` through the CLI's `main` in this process (exit code and stderr: a process
 * start would cost more than most merges here); {@link cliProcess} for the one test that reads stdout.
 */
function cli(args: string[]) {
  return runCliInProcess(['merge', ...args]);
}

/** `tokenload merge <args>` as a process of the built CLI: exit code, stdout and stderr. */
function cliProcess(args: string[]) {
  return runNode([ENTRY, 'merge', ...args]);
}

function freshDir(name: string): string {
  const dir = join(root, name);
  rmSync(dir, { recursive: true, force: true });
  return dir;
}

/** The summary the single-run code computes from the shards' records, concatenated. */
function concatenatedSummary(dirs: readonly string[]) {
  const time = new EpochBase();
  const lines = dirs.flatMap((d) => linesOf(join(d, 'profile_export.jsonl')));
  return summarize(
    lines.map((l) => readRecordLine(l, { time, streaming: true })),
    { slos: parseGoodput(GOODPUT) },
  );
}

const RUN_TAGS = new Set(RUN_METRICS.map((d) => d.tag));

test('the merge of the shards is the run: every metric, check and count as the single-run code computes them', async () => {
  const out = freshDir('merged');
  const outcome = await mergeShards({ shardDirs: shards, artifactDir: out });
  assert.equal(outcome.status.status, 'completed');
  const merged = readJson(join(out, 'profile_export_aiperf.json'));
  const reference = concatenatedSummary(shards);
  const original = readJson(join(runDir, 'profile_export_aiperf.json'));
  // The workload has what a merge must carry: failures, goodput, cached tokens, several turns.
  assert.ok(reference.totals.errorCount > 0 && reference.totals.validCount > 0);
  assert.ok((reference.totals.goodCount ?? 0) > 0);
  assert.ok((reference.cacheCheck?.reported_cached_tokens ?? 0) > 0);

  for (const [tag, value] of Object.entries(reference.metrics)) {
    assert.deepEqual(merged[tag], value, tag);
    // Against the run itself: record metrics exactly; run-level ones on the run's float ns times.
    if (!RUN_TAGS.has(tag)) assert.deepEqual(merged[tag], original[tag], `${tag} of the run`);
    else {
      const [m, o] = [(merged[tag] as { avg: number }).avg, (original[tag] as { avg: number }).avg];
      assert.ok(Math.abs(m - o) <= 1e-9 * Math.abs(o), `${tag}: ${m} vs the run's ${o}`);
    }
  }
  assert.deepEqual(
    Object.keys(merged)
      .filter((k) => RUN_TAGS.has(k))
      .sort(),
    Object.keys(reference.metrics)
      .filter((k) => RUN_TAGS.has(k))
      .sort(),
  );
  for (const key of [
    'error_summary',
    'usage_check',
    'cache_check',
    'responses',
    'tails_with_failures',
    'warnings',
    'start_up',
    'per_turn',
  ] as const)
    assert.deepEqual(merged[key], original[key], key);
  // The run has several turns per session, so per_turn is there to compare.
  assert.ok(original.per_turn !== undefined, 'the run has per_turn');
  assert.ok(
    (original.warnings as string[]).some((w) => w.startsWith('the first wave')),
    `the run notes its slow first wave: ${JSON.stringify(original.warnings)}`,
  );
  assert.deepEqual(merged.error_summary, reference.errorSummary);

  // Every line of every shard, once; each shard's lines in their own order.
  const outLines = linesOf(join(out, 'profile_export.jsonl'));
  assert.deepEqual([...outLines].sort(), linesOf(join(runDir, 'profile_export.jsonl')).sort());
  const section = merged.shards as { count: number; missing: number[]; per_shard: Json[] };
  assert.equal(section.count, 3);
  assert.deepEqual(section.missing, []);
  for (const [i, dir] of shards.entries()) {
    const own = linesOf(join(dir, 'profile_export.jsonl'));
    assert.deepEqual(
      outLines.filter((l) => own.includes(l)),
      own,
    );
    const failed = own.filter((l) => !l.endsWith('"error":null}')).length;
    assert.deepEqual(
      {
        index: section.per_shard[i]?.index,
        dir: section.per_shard[i]?.dir,
        requests: section.per_shard[i]?.requests,
        errors: section.per_shard[i]?.errors,
      },
      { index: i, dir, requests: own.length, errors: failed },
    );
  }
  // inputs.json: the shards' entries, concatenated, are the run's.
  const sessions = (file: string) => (readJson(file).data as Json[]).map((e) => JSON.stringify(e)).sort();
  assert.deepEqual(sessions(join(out, 'inputs.json')), sessions(join(runDir, 'inputs.json')));
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /tokenload report/);
  assert.match(outcome.consoleText, /^CLI Command: .*\nMerged: 3 folders of 3 shards, 40 requests\nShard 0 /);
});

test("values spilled to disk past a tiny bound: the merged summary is the unspilled merge's, every percentile exact", async () => {
  const plain = freshDir('merged-plain');
  const spilled = freshDir('merged-spilled');
  const a = await mergeShards({ shardDirs: shards, artifactDir: plain });
  // spillAfterValues: used only to force spilling (the default, 64 Mi values, keeps a test's values in memory).
  const b = await mergeShards({ shardDirs: shards, artifactDir: spilled, spillAfterValues: 0 });
  assert.deepEqual(a.spill, { runs: 0, bytes: 0 });
  assert.ok(b.spill.runs > 1 && b.spill.bytes > 0, `spilled ${JSON.stringify(b.spill)}`);
  // Everything but the id each merge draws afresh.
  const [x, y] = [plain, spilled].map((d) => {
    const json = readJson(join(d, 'profile_export_aiperf.json'));
    delete json.benchmark_id;
    delete (json.run_info as Json).benchmark_id;
    return json;
  });
  assert.ok(x !== undefined && y !== undefined);
  assert.ok((x.inter_chunk_latency as { count: number }).count > 256, 'ICL crosses a spilled chunk');
  for (const key of Object.keys(x)) assert.deepEqual(y[key], x[key], key);
  assert.equal(
    readFileSync(join(spilled, 'profile_export_aiperf.csv'), 'utf8'),
    readFileSync(join(plain, 'profile_export_aiperf.csv'), 'utf8'),
  );
  // The spill files were unlinked when opened: the folder holds the artifacts only.
  assert.deepEqual(
    readdirSync(spilled).filter((f) => f.startsWith('.')),
    [],
  );
});

test('shards that ran one after the other without --start-at: merged, with a warning that says so', async () => {
  // Found by a new user: two shards run 36 s apart merged into one run of twice the duration and half
  // the throughput, with no word.
  const apart = join(freshDir('apart-shards'), 'shards');
  const dirs = shards.map((d, i) => {
    const copy = join(apart, String(i));
    cpSync(d, copy, { recursive: true });
    return copy;
  });
  const later = join(dirs[2] as string, 'profile_export_aiperf.json');
  const summary = readJson(later);
  const hourMs = 3_600_000;
  for (const key of ['start_time', 'end_time'] as const)
    summary[key] = new Date(Date.parse(summary[key] as string) + hourMs).toISOString();
  writeFileSync(later, `${JSON.stringify(summary, null, 2)}\n`);
  const out = freshDir('merged-apart');
  const r = await cli([...dirs, '--artifact-dir', out]);
  assert.equal(r.code, 0, r.stderr);
  const warnings = readJson(join(out, 'profile_export_aiperf.json')).warnings as string[];
  const apartWarning = warnings.find((w) => w.startsWith('the shards did not run at the same time'));
  assert.ok(apartWarning !== undefined, JSON.stringify(warnings));
  assert.match(apartWarning, /start the shards with one --start-at/);
});

test('a missing shard: refused by name, nothing written; --allow-partial merges the rest and says partial first', async () => {
  const out = freshDir('partial');
  const refused = await cli([shards[0] as string, shards[2] as string, '--artifact-dir', out]);
  assert.equal(refused.code, 1, refused.stderr);
  assert.match(refused.stderr, /merge refused, nothing written: shard 1 of 3 missing/);
  assert.equal(existsSync(out), false);

  const partial = await cliProcess([
    shards[0] as string,
    shards[2] as string,
    '--artifact-dir',
    out,
    '--allow-partial',
  ]);
  assert.equal(partial.code, 0, partial.stderr);
  assert.match(partial.stdout, /^Partial run: shard 1 of 3 missing\n/);
  const merged = readJson(join(out, 'profile_export_aiperf.json'));
  assert.deepEqual(merged.run_status, { status: 'partial', reason: 'shard 1 of 3 missing', exit_code: 0 });
  assert.deepEqual((merged.shards as { missing: number[] }).missing, [1]);
  const reference = concatenatedSummary([shards[0] as string, shards[2] as string]);
  assert.deepEqual(merged.request_latency, reference.metrics.request_latency);
  assert.deepEqual(merged.request_count, reference.metrics.request_count);
  assert.match(readFileSync(join(out, 'report.html'), 'utf8'), /Partial run: shard 1 of 3 missing/);
});

test('a failed shard: refused by name; with --allow-partial its records are merged and the result is partial', async () => {
  const failed = join(root, 'failed-shard');
  rmSync(failed, { recursive: true, force: true });
  cpSync(shards[1] as string, failed, { recursive: true });
  const reason = 'the run stopped on an error: Error: boom';
  patchShard(failed, { runStatus: { status: 'failed', reason, exit_code: 70 } });
  const set = [shards[0] as string, failed, shards[2] as string];
  const out = freshDir('failed');
  const refused = await cli([...set, '--artifact-dir', out]);
  assert.equal(refused.code, 1);
  assert.ok(refused.stderr.includes(`shard 1 (${failed}) failed: ${reason}`), refused.stderr);
  assert.equal(existsSync(out), false);

  const outcome = await mergeShards({ shardDirs: set, artifactDir: out, allowPartial: true });
  assert.equal(outcome.status.status, 'partial');
  assert.equal(outcome.recordCount, linesOf(join(runDir, 'profile_export.jsonl')).length);
  assert.equal(outcome.shards.per_shard[1]?.run_status.status, 'failed');
});

test('a shard whose records file lost lines (a cut-short copy) is refused by name; --allow-partial says partial', async () => {
  const cut = join(root, 'cut-shard');
  rmSync(cut, { recursive: true, force: true });
  cpSync(shards[1] as string, cut, { recursive: true });
  const file = join(cut, 'profile_export.jsonl');
  const lines = linesOf(file);
  writeFileSync(file, `${lines.slice(0, -1).join('\n')}\n`);
  const set = [shards[0] as string, cut, shards[2] as string];
  const out = freshDir('cut');
  const refused = await cli([...set, '--artifact-dir', out]);
  assert.equal(refused.code, 1, refused.stderr);
  const said = `shard 1 (${cut}): ${lines.length - 1} lines in profile_export.jsonl, its summary says ${lines.length} requests`;
  assert.ok(refused.stderr.includes(said), refused.stderr);
  assert.equal(existsSync(join(out, 'profile_export.jsonl')), false);
  const outcome = await mergeShards({ shardDirs: set, artifactDir: out, allowPartial: true });
  assert.equal(outcome.status.status, 'partial');
  assert.ok(outcome.status.reason?.includes(said));
});

test('a malformed line is named by file, line and field, and leaves no records file and an earlier merge as it was', async () => {
  const broken = join(root, 'broken-shard');
  rmSync(broken, { recursive: true, force: true });
  cpSync(shards[0] as string, broken, { recursive: true });
  const file = join(broken, 'profile_export.jsonl');
  const lines = linesOf(file);
  lines[2] = (lines[2] as string).replace(/"request_end_ns":\d+/, '"request_end_ns":"soon"');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const out = freshDir('broken');
  const r = await cli([broken, shards[1] as string, shards[2] as string, '--artifact-dir', out]);
  assert.equal(r.code, 1);
  assert.ok(
    r.stderr.includes(
      `${file}:3: field metadata.request_end_ns: expected an integer of epoch ns, got "soon"`,
    ),
    r.stderr,
  );
  assert.equal(existsSync(out), false, 'a folder the refused merge made is not left behind');
  // An earlier merge in the folder is kept, file for file, when the next one is refused.
  const kept = freshDir('kept');
  const good = await cli([...shards, '--artifact-dir', kept]);
  assert.equal(good.code, 0, good.stderr);
  const before = new Map(readdirSync(kept).map((n) => [n, readFileSync(join(kept, n))]));
  const refused = await cli([broken, shards[1] as string, shards[2] as string, '--artifact-dir', kept]);
  assert.equal(refused.code, 1);
  assert.deepEqual(new Map(readdirSync(kept).map((n) => [n, readFileSync(join(kept, n))])), before);
});

test('folders that are not shards of one run are refused before anything is written', async () => {
  const out = freshDir('refused');
  const empty = join(root, 'empty');
  mkdirSync(empty, { recursive: true });
  const notRun = await cli([empty, '--artifact-dir', out]);
  assert.equal(notRun.code, 1);
  assert.match(notRun.stderr, /empty: no profile_export_aiperf\.json here; is this a tokenload run folder\?/);
  const notShard = await cli([runDir, '--artifact-dir', out]);
  assert.equal(notShard.code, 1);
  assert.match(
    notShard.stderr,
    /profile_export_aiperf\.json: field shard: missing: this run was not a shard/,
  );
  const twice = await cli([shards[0] as string, shards[0] as string, '--artifact-dir', out]);
  assert.match(twice.stderr, /shard 0 given twice/);

  const other = join(root, 'other-count');
  rmSync(other, { recursive: true, force: true });
  cpSync(shards[1] as string, other, { recursive: true });
  patchShard(other, { shard: { count: 4 } });
  const counts = await cli([shards[0] as string, other, '--artifact-dir', out]);
  assert.equal(counts.code, 1);
  assert.match(counts.stderr, /they disagree on shard\.count: shard 0 \(.*\) 3, shard 1 \(.*other-count\) 4/);
  const intoShard = await cli([...shards, '--artifact-dir', shards[0] as string]);
  assert.equal(intoShard.code, 2);
  assert.match(intoShard.stderr, /--artifact-dir .* is shard folder/);
  assert.equal((await cli([...shards])).code, 2, 'no --artifact-dir');
  assert.equal(existsSync(out), false);
});
