/**
 * A run owns its artifact folder: a re-run into a folder that holds an earlier run's artifacts
 * leaves none of them beside its own (plots included) and says it replaced them, never touches a
 * file tokenload did not write, and a run that fails — every request failed, or an error after its
 * start — leaves a summary that says it failed and why. A re-run that fails on its input (the
 * tokenizer, the input file, its dataset type, the schedule, the server) fails before it touches
 * the folder: the earlier run's artifacts stay. Through `runProfile` and the CLI (its `main`, in this
 * process) against the in-process simulator.
 */
import assert from 'node:assert/strict';
import {
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
import type { ProfileConfigInput } from '../../src/config/fields.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const SILENT = { info: () => undefined, warn: () => undefined };
const STALE = 'STALE: written by an earlier run';
/** What every earlier run leaves (`tokenload profile` and `tokenload plot`). */
const EARLIER = [
  'profile_export.jsonl',
  'profile_export_aiperf.json',
  'profile_export_aiperf.csv',
  'profile_export_console.txt',
  'inputs.json',
  'report.html',
  'server_metrics_export.jsonl',
  'server_metrics_export.json',
  'server_metrics_export.csv',
  'server_metrics_metadata.json',
];

/** What a run writes: the files above and its log. */
const WRITTEN = [...EARLIER, 'logs/aiperf.log'];

let sim: Awaited<ReturnType<typeof startSimulator>>;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1 });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A folder holding an earlier run's artifacts and plots, plus the user's own files. */
function folderOfEarlierRun(userPlotFile: boolean): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-folder-'));
  dirs.push(dir);
  for (const name of EARLIER) writeFileSync(join(dir, name), STALE);
  mkdirSync(join(dir, 'plots'));
  writeFileSync(join(dir, 'plots', 'ttft-over-time.png'), STALE);
  writeFileSync(join(dir, 'plots', 'errors-over-time.png'), STALE);
  if (userPlotFile) {
    writeFileSync(join(dir, 'plots', 'my-notes.md'), 'mine');
    writeFileSync(join(dir, 'plots', 'my_plot.png'), 'mine');
  }
  writeFileSync(join(dir, 'notes.txt'), 'mine');
  return dir;
}

function run(dir: string, over: Partial<ProfileConfigInput> = {}) {
  return runProfile(
    profileConfig({
      models: ['m'],
      tokenizer: 'builtin',
      url: sim.url,
      streaming: true,
      synthetic: { isl: 16, osl: 3, numDatasetEntries: 2 },
      requestCount: 2,
      concurrency: 1,
      clientWarmupMs: 0,
      ui: 'none',
      artifactDir: dir,
      commandLine: 'test',
      ...over,
    }),
    { log: SILENT, stopSignal: new AbortController().signal },
  );
}

const read = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8');

interface RunStatus {
  status: string;
  reason: string | null;
  exit_code: number;
}

function runStatus(dir: string): RunStatus {
  return (JSON.parse(read(dir, 'profile_export_aiperf.json')) as { run_status: RunStatus }).run_status;
}

test('a successful re-run: every earlier artifact replaced, earlier plots gone, the user’s files kept', async () => {
  const dir = folderOfEarlierRun(true);
  await run(dir);
  for (const name of EARLIER) assert.ok(!read(dir, name).includes('STALE'), `${name} is this run's`);
  assert.deepEqual(
    readdirSync(join(dir, 'plots')).sort(),
    ['my-notes.md', 'my_plot.png'],
    'only the user’s files (a PNG of their own included) stay in plots/',
  );
  assert.equal(read(dir, 'notes.txt'), 'mine');
  assert.deepEqual(runStatus(dir), { status: 'completed', reason: null, exit_code: 0 });
  // A plots folder that held only tokenload's PNGs goes with them.
  const second = folderOfEarlierRun(false);
  await run(second);
  assert.equal(existsSync(join(second, 'plots')), false);
});

test('a run in which every request failed: its own summary says so; nothing of the earlier run is left', async () => {
  const dir = folderOfEarlierRun(false);
  const outcome = await run(dir, { url: `${sim.url}/wrong` });
  assert.equal(outcome.status.exit_code, 3);
  // Its /metrics (under /wrong) answers 404: no server_metrics_* file is written (server-metrics.md).
  const unscraped = EARLIER.filter((name) => name.startsWith('server_metrics'));
  for (const name of unscraped) assert.equal(existsSync(join(dir, name)), false, `${name} is gone`);
  for (const name of EARLIER.filter((n) => !unscraped.includes(n)))
    assert.ok(!read(dir, name).includes('STALE'), `${name} is this run's`);
  assert.equal(existsSync(join(dir, 'plots')), false);
  const status = runStatus(dir);
  assert.equal(status.status, 'failed');
  assert.match(status.reason ?? '', /^no request succeeded: all 2 requests failed: 404 Not Found ×2/);
  assert.match(status.reason ?? '', /\/wrong\/v1\/chat\/completions: check --url/);
});

test('a tokenizer that cannot load: an earlier run is kept; a folder without one gets a failed summary with the reason', async () => {
  const dir = folderOfEarlierRun(false);
  const missing = join(dir, 'no-such-tokenizer.json');
  await assert.rejects(run(dir, { tokenizer: missing }), { name: 'TokenizerLoadError' });
  for (const name of EARLIER) assert.equal(read(dir, name), STALE, `${name} is the earlier run's`);
  const fresh = mkdtempSync(join(tmpdir(), 'tokenload-folder-'));
  dirs.push(fresh);
  await assert.rejects(run(fresh, { tokenizer: missing }), { name: 'TokenizerLoadError' });
  const status = runStatus(fresh);
  assert.equal(status.status, 'failed');
  assert.equal(status.exit_code, 1);
  assert.ok(
    status.reason?.startsWith('the run stopped on an error: TokenizerLoadError: '),
    status.reason ?? '',
  );
  assert.ok(status.reason?.includes('no-such-tokenizer.json'), status.reason ?? '');
  assert.deepEqual(readdirSync(fresh).sort(), ['logs', 'profile_export_aiperf.json']);
});

/** `tokenload profile` against the simulator into `dir`; resolves with the exit code and stderr. */
function cli(dir: string, extra: string[]): Promise<{ code: number | null; stderr: string }> {
  const args = [
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    sim.url,
    '--endpoint-type',
    'chat',
    '--streaming',
  ];
  args.push('--isl', '16', '--osl', '3', '--request-count', '2', '--ui', 'none', '--client-warmup-ms', '0');
  return runCliInProcess([...args, '--artifact-dir', dir, ...extra]);
}

/** Every file under `dir`, relative, sorted. */
function filesUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as import('node:fs').Dirent[])
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

test('a run into a former sweep folder, and a sweep into a former run folder: nothing earlier is left', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-folder-'));
  dirs.push(dir);
  // A sweep of three values, a user's file inside one value folder.
  assert.equal((await cli(dir, ['--concurrency', '1,2,3'])).code, 0);
  writeFileSync(join(dir, 'concurrency_3', 'mine.txt'), 'mine');
  assert.equal((await cli(dir, ['--concurrency', '1'])).code, 0);
  assert.deepEqual(filesUnder(dir), [...WRITTEN, 'concurrency_3/mine.txt'].sort());
  // A sweep of two values into that single run's folder: its top-level files go, value 3's stays gone.
  assert.equal((await cli(dir, ['--concurrency', '1,2'])).code, 0);
  const sweep = ['concurrency_1', 'concurrency_2'].flatMap((v) => WRITTEN.map((n) => `${v}/${n}`));
  const aggregate = [
    'sweep_aggregate/profile_export_aiperf_sweep.csv',
    'sweep_aggregate/profile_export_aiperf_sweep.json',
  ];
  const left = [...sweep, 'concurrency_3/mine.txt', ...aggregate];
  assert.deepEqual(filesUnder(dir), left.sort());
});

test('a typo in --input-file fails before the earlier run’s artifacts are touched', async () => {
  const dir = folderOfEarlierRun(false);
  const missing = join(dir, 'no-such-trace.jsonl');
  await assert.rejects(run(dir, { inputFile: missing, customDatasetType: 'single_turn' }), {
    name: 'DatasetError',
  });
  for (const name of EARLIER) assert.equal(read(dir, name), STALE, `${name} is the earlier run's`);
  const r = await cli(dir, [
    '--concurrency',
    '1,2',
    '--input-file',
    missing,
    '--custom-dataset-type',
    'single_turn',
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /no-such-trace\.jsonl: cannot open trace file/);
  for (const name of EARLIER) assert.equal(read(dir, name), STALE, `${name} is the earlier run's`);
});

/** `tokenload <args>`, in this process; resolves with the exit code and stderr. */
const tokenload = runCliInProcess;

test('report and plot on a run that failed at start-up say why it failed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-folder-'));
  dirs.push(dir);
  await assert.rejects(run(dir, { tokenizer: join(dir, 'no-such-tokenizer.json') }), {
    name: 'TokenizerLoadError',
  });
  for (const command of ['report', 'plot']) {
    const r = await tokenload([command, dir]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /no profile_export\.jsonl here: the run failed before recording any request \(run_status in profile_export_aiperf\.json\): the run stopped on an error: TokenizerLoadError: .*no-such-tokenizer\.json/,
      `${command}: ${r.stderr}`,
    );
  }
});

test('a re-run that fails on its input keeps the earlier run, and says so; one that runs says it replaced it', async () => {
  const dir = folderOfEarlierRun(false);
  const rows = join(dir, 'rows.jsonl');
  writeFileSync(rows, '{"text":"hello"}\n{"text":"world"}\n');
  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"text":"hello"}\n{"text": 5}\n');
  const failures: Array<[string[], RegExp]> = [
    [['--tokenizer', join(dir, 'no-such-tokenizer.json')], /no-such-tokenizer\.json/],
    [['--input-file', bad, '--custom-dataset-type', 'single_turn'], /bad\.jsonl:2: /],
    [['--input-file', rows, '--custom-dataset-type', 'single_turn', '--fixed-schedule'], /no timestamp/],
    [['--url', 'http://127.0.0.1:9'], /127\.0\.0\.1:9/],
  ];
  for (const [extra, why] of failures) {
    const r = await cli(dir, extra);
    assert.equal(r.code, 1, `${extra.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, why);
    assert.match(r.stderr, /the earlier run's artifacts are kept \(this run stopped before touching them\)/);
    for (const name of EARLIER) assert.equal(read(dir, name), STALE, `${extra.join(' ')}: ${name}`);
  }
  // A sweep whose first run fails on its tokenizer keeps the earlier run in the sweep's folder too.
  const sweep = await cli(dir, ['--concurrency', '1,2', '--tokenizer', join(dir, 'no-such-tokenizer.json')]);
  assert.equal(sweep.code, 1, sweep.stderr);
  for (const name of EARLIER) assert.equal(read(dir, name), STALE, `sweep: ${name}`);
  const ok = await cli(dir, []);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(
    ok.stderr,
    new RegExp(`\\[tokenload\\] ${dir}: replacing an earlier run's artifacts \\(\\d+ files removed\\)`),
  );
  for (const name of EARLIER) assert.ok(!read(dir, name).includes('STALE'), `${name} is this run's`);
});

test('every PNG `tokenload plot` writes is one a later run removes as its own', async () => {
  const dir = folderOfEarlierRun(false);
  await run(dir);
  const plotted = await tokenload(['plot', dir]);
  assert.equal(plotted.code, 0, plotted.stderr);
  assert.ok(readdirSync(join(dir, 'plots')).length > 5);
  await run(dir);
  assert.equal(existsSync(join(dir, 'plots')), false, 'no PNG of the earlier plot is left');
});
