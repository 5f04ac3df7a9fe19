/**
 * The exit codes of the real binary (`bin/tokenload.js` over the built package), as a script or CI
 * job sees them: 2 a bad flag, 1 a bad trace line, 1 an unreachable server, 3 a run in which no
 * request succeeded, 4 a run --failed-request-threshold stopped, 130 Ctrl-C, 70 an internal bug (with its stack and a request to report it,
 * never a one-line user error).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { builtCli } from '../helpers/built-package.js';

const BIN = builtCli();
const BOUND_MS = 90_000;
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-exit-'));
  dirs.push(dir);
  return dir;
}

interface Exit {
  code: number | null;
  stderr: string;
}

/** Runs the binary; `onStderr` may act on the output so far (e.g. send a signal). */
function run(
  args: string[],
  nodeArgs: string[] = [],
  onStderr?: (text: string, kill: () => void) => void,
): Promise<Exit> {
  const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
    onStderr?.(stderr, () => child.kill('SIGINT'));
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(bound);
      resolve({ code, stderr });
    }),
  );
}

const quiet = ['--ui', 'none', '--client-warmup-ms', '0'];
/** The built-in simulator without its warm-up (1 s of CPU a run; these runs time nothing). */
const SIMULATOR = ['--simulator', '--simulator-option', 'warmup-ms=0'];

test('a bad flag value exits 2 naming the flag', async () => {
  const r = await run(['profile', '-m', 'm', '--tokenizer', 'builtin', '--request-rate', 'abc', ...quiet]);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--request-rate/);
  const rule = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--arrival-pattern',
    'gamma',
    ...quiet,
  ]);
  assert.equal(rule.code, 2, rule.stderr);
  assert.match(rule.stderr, /^error: --arrival-pattern requires --request-rate or --request-rate-series\.$/m);
});

test('a bad trace line exits 1 naming the file and line', async () => {
  const dir = tempDir();
  const trace = join(dir, 'trace.jsonl');
  writeFileSync(
    trace,
    '{"chat_id":1,"parent_chat_id":-1,"timestamp":0,"input_length":32,"output_length":4,"type":"text","turn":1,"hash_ids":[1,2]}\n{"chat_id": 2,\n',
  );
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--input-file',
    trace,
    '--custom-dataset-type',
    'bailian_trace',
    '--no-trace-streaming',
    '--url',
    'http://127.0.0.1:9',
    '--artifact-dir',
    join(dir, 'out'),
    ...quiet,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: .*trace\.jsonl:2/m);
  assert.doesNotMatch(r.stderr, /internal error/);
});

test('an unreachable server exits 1 with one line', async () => {
  const dir = tempDir();
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    'http://127.0.0.1:9',
    '--artifact-dir',
    dir,
    ...quiet,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: .*127\.0\.0\.1:9/m);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('a run in which every request failed exits 3, saying so on stderr', async () => {
  const dir = tempDir();
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    ...SIMULATOR,
    '--endpoint',
    '/v1/no/such/route',
    '--request-count',
    '2',
    '--artifact-dir',
    dir,
    ...quiet,
  ]);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /^error: no request succeeded: all 2 requests failed: 404 Not Found ×2/m);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8'));
  assert.deepEqual([summary.run_status.status, summary.run_status.exit_code], ['failed', 3]);
});

interface ThresholdRun {
  code: number | null;
  stderr: string;
  summary: {
    run_status: { status: string; reason: string | null; exit_code: number };
    failed_request_threshold: {
      threshold: number;
      min_requests: number;
      tripped: boolean;
      failed: number;
      counted: number;
      tripped_after_s: number | null;
    };
  };
  records: Array<{ metadata: { was_cancelled: boolean; benchmark_phase: string }; error: unknown }>;
  console: string;
}

/** A run against the simulator with `--failed-request-threshold`; its exit, summary and records. */
async function thresholdRun(extra: string[]): Promise<ThresholdRun> {
  const dir = tempDir();
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    ...SIMULATOR,
    '--simulator-option',
    'mode=fixed',
    '--simulator-option',
    'ttft-ms=2',
    '--simulator-option',
    'itl-ms=1',
    '--synthetic-input-tokens-mean',
    '16',
    '--output-tokens-mean',
    '4',
    '--artifact-dir',
    dir,
    ...quiet,
    ...extra,
  ]);
  const read = (name: string) => readFileSync(join(dir, name), 'utf8');
  return {
    ...r,
    summary: JSON.parse(read('profile_export_aiperf.json')),
    records: read('profile_export.jsonl')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l)),
    console: read('profile_export_console.txt'),
  };
}

test('--failed-request-threshold: half the answers failing stops the run early, drains, exports, exits 4 saying why', async () => {
  const r = await thresholdRun([
    '--simulator-option',
    'fault-rate-500=0.5',
    '--concurrency',
    '4',
    '--request-count',
    '400',
    '--failed-request-threshold',
    '0.2',
  ]);
  assert.equal(r.code, 4, r.stderr);
  const t = r.summary.failed_request_threshold;
  assert.equal(t.tripped, true);
  assert.ok(t.counted >= t.min_requests && t.min_requests === 20, JSON.stringify(t));
  assert.ok(t.failed > 0.2 * t.counted, JSON.stringify(t));
  assert.ok(t.tripped_after_s !== null && t.tripped_after_s > 0);
  // Stopped issuing: far fewer than the 400 asked, each one exported; the ones in flight drained.
  assert.ok(r.records.length < 100 && r.records.length >= t.counted, String(r.records.length));
  assert.ok(r.records.every((x) => !x.metadata.was_cancelled));
  assert.equal(r.summary.run_status.status, 'failed_request_threshold');
  assert.equal(r.summary.run_status.exit_code, 4);
  const said = `--failed-request-threshold 0.2 exceeded: ${t.failed} of ${t.counted} answered profiling requests failed`;
  assert.ok(r.summary.run_status.reason?.startsWith(said), r.summary.run_status.reason ?? '');
  assert.match(r.stderr, new RegExp(`^error: ${said.replace(/[.]/g, '\\.')}`, 'm'));
  assert.ok(r.console.startsWith(`Stopped early: ${said}`), r.console.slice(0, 300));
});

test('--failed-request-threshold not reached: the run completes; warm-up and client cancellations are not counted', async () => {
  const r = await thresholdRun([
    '--simulator-option',
    'fault-rate-500=0.05',
    '--simulator-option',
    'seed=3',
    '--concurrency',
    '4',
    '--request-count',
    '60',
    '--warmup-request-count',
    '25',
    '--request-cancellation-rate',
    '50',
    '--random-seed',
    '7',
    '--failed-request-threshold',
    '0.25',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.summary.run_status.status, 'completed');
  assert.equal(r.records.length, 60);
  const answered = r.records.filter((x) => !x.metadata.was_cancelled);
  const cancelled = r.records.length - answered.length;
  assert.ok(cancelled > 0.25 * 60, `cancelled ${cancelled}: enough to trip the threshold were they counted`);
  assert.deepEqual(r.summary.failed_request_threshold, {
    threshold: 0.25,
    min_requests: 20,
    tripped: false,
    failed: answered.filter((x) => x.error !== null).length,
    counted: answered.length,
    tripped_after_s: null,
  });
});

test('an artifact folder that cannot be created names --artifact-dir, exit 1', async () => {
  const dir = tempDir();
  const file = join(dir, 'a-file');
  writeFileSync(file, 'x');
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    'http://127.0.0.1:9',
    '--artifact-dir',
    file,
    ...quiet,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: --artifact-dir .*a-file: cannot create the folder \(EEXIST/m);
});

test('an artifact file that cannot be written names --artifact-dir before anything is sent, exit 1', async () => {
  const dir = tempDir();
  mkdirSync(join(dir, 'inputs.json'));
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    ...SIMULATOR,
    '--request-count',
    '2',
    '--artifact-dir',
    dir,
    ...quiet,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: --artifact-dir: cannot write .*inputs\.json \(EISDIR\)$/m);
  const records = join(dir, 'profile_export.jsonl');
  assert.equal(existsSync(records) ? readFileSync(records, 'utf8') : '', '', 'no request was sent');
});

test('a simulator log file that cannot be created names the option, exit 1', async () => {
  const dir = tempDir();
  const log = join(dir, 'missing-folder', 'truth.jsonl');
  const r = await run([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    ...SIMULATOR,
    '--simulator-option',
    `ground-truth-log=${log}`,
    '--artifact-dir',
    dir,
    ...quiet,
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: ground-truth-log .*truth\.jsonl: cannot create the file \(ENOENT\)$/m);
});

test('Ctrl-C during a run exits 130', async () => {
  const dir = tempDir();
  let sent = false;
  const r = await run(
    [
      'profile',
      ...SIMULATOR,
      '-m',
      'm',
      '--tokenizer',
      'builtin',
      '--streaming',
      '--osl',
      '2000',
      '--request-count',
      '1000',
      '--artifact-dir',
      dir,
      ...quiet,
    ],
    [],
    (text, kill) => {
      if (!sent && text.includes('profiling')) {
        sent = true;
        kill();
      }
    },
  );
  assert.ok(sent, r.stderr);
  assert.equal(r.code, 130, r.stderr);
});

test('an internal bug exits 70 with its stack and a request to report it', async () => {
  const dir = join(tempDir(), 'inject-bug-here');
  const r = await run(
    [
      'profile',
      '-m',
      'm',
      '--tokenizer',
      'builtin',
      '--url',
      'http://127.0.0.1:9',
      '--artifact-dir',
      dir,
      ...quiet,
    ],
    ['--import', './test/helpers/inject-bug.mjs'],
  );
  assert.equal(r.code, 70, r.stderr);
  assert.match(r.stderr, /TypeError: injected/);
  assert.match(r.stderr, /\n\s+at /, 'the stack is printed');
  assert.match(r.stderr, /internal error.*please report/);
  assert.doesNotMatch(r.stderr, /^error: /m);
});
