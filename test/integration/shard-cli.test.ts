/**
 * `--shard-index/--shard-count` and `--start-at` through the built CLI, as a user sees them: three
 * shards of a synthetic run split `--concurrency` and `--request-count` (the remainder to the lowest
 * indices) and the dataset's entries (entry k to shard k mod 3), each summary keeping the values
 * asked and saying its share; every misuse refused with exit code 2 and the reason, before
 * anything is written (the built CLI's `main` in this process); and (`runProfile`) a Ctrl-C while a
 * run waits for `--start-at`.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { runProfile } from '../../src/run/profile.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { builtCli } from '../helpers/built-package.js';
import { runBuiltCliInProcess } from '../helpers/cli-in-process.js';
import { type ProcessExit, runNodeProcess } from '../helpers/cli-process.js';

const BIN = builtCli();
let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 });
});

after(async () => {
  await sim?.close();
});

function profile(args: string[]): Promise<ProcessExit> {
  return runNodeProcess([BIN, 'profile', '-m', 'm', '--tokenizer', 'builtin', ...args]);
}

interface Summary {
  request_count: { avg: number };
  load: { description: string };
  tokenload_config: { concurrency: number; requestCount: number; shardIndex: number; shardCount: number };
  shard: {
    index: number;
    count: number;
    start_at: string | null;
    first_send_skew_ms: number | null;
    session_hash: string;
    clock: { uncertainty_ms: number } | null;
    sessions: number;
    requests: number;
  };
}

test('3 shards of a synthetic run: concurrency 5 → 2, 2, 1; request count 11 → 4, 4, 3; entry k to shard k mod 3', async () => {
  const dirs = [0, 1, 2].map(() => mkdtempSync(join(tmpdir(), 'tokenload-shard-cli-')));
  const runs = await Promise.all(
    dirs.map((dir, i) =>
      profile([
        ...['--url', sim.url, '--isl', '16', '--osl', '4', '--num-dataset-entries', '9'],
        ...['--concurrency', '5', '--request-count', '11', '--shard-index', String(i), '--shard-count', '3'],
        ...['--client-warmup-ms', '0', '--no-server-metrics', '--ui', 'none', '--artifact-dir', dir],
      ]),
    ),
  );
  runs.forEach((r, i) => {
    assert.equal(r.code, 0, r.stderr);
    const dir = dirs[i] as string;
    const s = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary;
    const share = { concurrency: [2, 2, 1][i], requests: [4, 4, 3][i] };
    assert.equal(s.request_count.avg, share.requests);
    assert.equal(s.load.description, `concurrency ${share.concurrency}`);
    assert.deepEqual(
      [
        s.tokenload_config.concurrency,
        s.tokenload_config.requestCount,
        s.tokenload_config.shardIndex,
        s.tokenload_config.shardCount,
      ],
      [5, 11, i, 3],
    );
    assert.deepEqual(
      [s.shard.index, s.shard.count, s.shard.start_at, s.shard.first_send_skew_ms, s.shard.session_hash],
      [i, 3, null, null, 'entry_index'],
    );
    assert.equal(s.shard.requests, share.requests);
    assert.ok(s.shard.clock !== null && s.shard.clock.uncertainty_ms >= 0, r.stderr);
    assert.match(r.stderr, new RegExp(`shard ${i} of 3: synthetic entries k with k mod 3 = ${i}`));
    assert.match(
      r.stdout,
      new RegExp(`Shard ${i} of 3 \\(0-based\\): ${share.requests} requests in \\d+ sessions`),
    );
    const ids = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { metadata: { conversation_id: string } }).metadata.conversation_id);
    assert.equal(ids.length, share.requests);
    for (const id of ids) assert.equal(Number(/^synthetic-(\d+)$/.exec(id)?.[1]) % 3, i, id);
  });
});

test('shard and start options used wrongly: exit 2 with the reason, nothing written', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-shard-cli-bad-'));
  const out = join(dir, 'run');
  const base = ['--url', sim.url, '--artifact-dir', out, '--ui', 'none'];
  const inTwoDays = new Date(Date.now() + 48 * 3600e3).toISOString();
  const cases: Array<[string[], RegExp]> = [
    [['--shard-index', '0'], /--shard-index and --shard-count go together/],
    [['--shard-index', '3', '--shard-count', '3'], /--shard-index 3 is not below --shard-count 3/],
    [
      ['--shard-index', '0', '--shard-count', '3', '--concurrency', '2'],
      /--concurrency 2 is split over the shards and would leave shard 2 without a session slot/,
    ],
    [['--shard-index', '0', '--shard-count', '2'], /--concurrency 1 \(the default\) is split/],
    [
      ['--shard-index', '0', '--shard-count', '4', '--concurrency', '8', '--request-count', '3'],
      /--request-count 3 is split over the shards and would leave shard 3 without a request/,
    ],
    [['--start-at', '2020-01-01T00:00:00Z'], /--start-at 2020-01-01T00:00:00\.000Z is [\d.]+ s in the past/],
    [['--start-at', inTwoDays], /--start-at .* is 48\.0 h ahead; at most 24 h is allowed/],
    [['--start-at', '12:00'], /expected an ISO 8601 time with a zone .* got "12:00"/],
    [['--start-at', '2030-01-01T00:00:00'], /expected an ISO 8601 time with a zone/],
    [
      ['--start-at', new Date(Date.now() + 60e3).toISOString(), '--concurrency', '1,2'],
      /--start-at cannot be combined with a sweep/,
    ],
  ];
  // The built CLI's `main` in this process, one after another: a refusal costs less than a process start.
  for (const [args, reason] of cases) {
    const r = await runBuiltCliInProcess(['profile', '-m', 'm', '--tokenizer', 'builtin', ...base, ...args]);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, reason);
  }
  assert.equal(existsSync(out), false);
});

test('Ctrl-C while waiting for --start-at: nothing sent, every export written, the shard section says so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-start-stop-'));
  const stop = new AbortController();
  const startAtMs = Date.now() + 120_000;
  const log = (m: string): void => {
    if (m.startsWith('start-up done; waiting')) stop.abort();
  };
  const before = sim.stats().requests;
  const outcome = await runProfile(
    {
      models: ['m'],
      tokenizer: 'builtin',
      url: sim.url,
      concurrency: 2,
      requestCount: 4,
      startAtMs,
      clientWarmupMs: 0,
      serverMetrics: false,
      ui: 'none',
      artifactDir: dir,
    },
    { log: { info: log, warn: log }, stopSignal: stop.signal },
  );
  assert.ok(Date.now() < startAtMs, 'the run did not wait for --start-at after Ctrl-C');
  assert.equal(outcome.status.status, 'interrupted');
  assert.equal(outcome.recordCount, 0);
  assert.equal(sim.stats().requests, before);
  const s = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Summary & {
    shard: { start_at_ms: number };
  };
  assert.deepEqual(
    [
      s.shard.index,
      s.shard.count,
      s.shard.start_at_ms,
      s.shard.first_send_skew_ms,
      s.shard.requests,
      s.shard.sessions,
    ],
    [0, 1, startAtMs, null, 0, 0],
  );
  assert.ok(existsSync(join(dir, 'report.html')));
  assert.match(outcome.consoleText, /Start: 0 requests in 0 sessions; start at .*, nothing sent/);
});
