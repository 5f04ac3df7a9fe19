/**
 * Interrupting `tokenload profile --simulator` (a real CLI process, the built one): SIGINT, SIGTERM and
 * a double Ctrl-C. The run must exit with 130 within a bound, leave a parseable
 * `profile_export.jsonl` and a summary with `was_cancelled: true` whose request_count matches the
 * successful lines, record requests cut at the end of the grace period as cancelled (499), and
 * leave no simulator process behind.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { builtCli } from '../helpers/built-package.js';

const ENTRY = builtCli();
/** Upper bound on every wait in this file (a stuck process fails the test instead of hanging it). */
const BOUND_MS = 90_000;
const POLL_MS = 100;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  dir: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Starts a long synthetic run. OSLs are drawn with a wide spread (seeded), so short requests finish
 * before the signal while long ones (thousands of tokens, several seconds each) are still running
 * when the grace period ends.
 */
function startRun(graceSeconds: number): Run {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-interrupt-'));
  dirs.push(dir);
  const args = [
    ENTRY,
    'profile',
    '--simulator',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--streaming',
    '--concurrency',
    '8',
    '--request-count',
    '100000',
    '--isl',
    '200',
    '--osl',
    '1500',
    '--osl-stddev',
    '1200',
    '--random-seed',
    '3',
    '--benchmark-grace-period',
    String(graceSeconds),
    '--ui',
    'none',
    // No warm-ups (the simulator's 1 s, the client's 0.5 s of CPU): what is checked is what the
    // signal does to a run under way, which starts once records are written.
    ...['--client-warmup-ms', '0', '--simulator-option', 'warmup-ms=0'],
    '--artifact-dir',
    dir,
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (b: Buffer) => {
    err += b.toString('utf8');
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, dir, stderr: () => err, exit };
}

function jsonlLines(dir: string): string[] {
  const file = join(dir, 'profile_export.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
}

/** Waits (bounded) until at least `count` records have been written, i.e. the run is under way. */
async function waitForRecords(run: Run, count: number): Promise<void> {
  for (let waited = 0; waited < BOUND_MS; waited += POLL_MS) {
    if (jsonlLines(run.dir).length >= count) return;
    if (run.child.exitCode !== null) assert.fail(`CLI exited early:\n${run.stderr()}`);
    await sleep(POLL_MS);
  }
  assert.fail(`no ${count} records within ${BOUND_MS} ms:\n${run.stderr()}`);
}

async function exitWithin(run: Run): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const timer = setTimeout(() => run.child.kill('SIGKILL'), BOUND_MS);
  try {
    return await run.exit;
  } finally {
    clearTimeout(timer);
  }
}

function simulatorPid(stderr: string): number {
  const m = /simulator started at \S+ \(pid (\d+)\)/.exec(stderr);
  assert.ok(m, `simulator pid in stderr:\n${stderr}`);
  return Number(m[1]);
}

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Waits (bounded) for the process to disappear (it is reaped by its parent, which has exited). */
async function waitGone(pid: number): Promise<boolean> {
  for (let waited = 0; waited < 10_000; waited += POLL_MS) {
    if (processGone(pid)) return true;
    await sleep(POLL_MS);
  }
  return processGone(pid);
}

interface RecordLine {
  metadata: { censored: boolean };
  error: { code: number; type: string; kind: string } | null;
}

/** Checks the artifacts of an interrupted run; returns the parsed records. */
function checkArtifacts(run: Run): RecordLine[] {
  const lines = jsonlLines(run.dir);
  assert.ok(lines.length > 0, 'records written');
  const records = lines.map((l, i) => {
    try {
      return JSON.parse(l) as RecordLine;
    } catch {
      return assert.fail(`line ${i + 1} of profile_export.jsonl is not JSON: ${l.slice(0, 80)}`);
    }
  });
  const summary = JSON.parse(readFileSync(join(run.dir, 'profile_export_aiperf.json'), 'utf8')) as {
    was_cancelled: boolean;
    request_count?: { avg: number };
    tails_with_failures: { censored: number; failed: number };
  };
  assert.equal(summary.was_cancelled, true);
  const ok = records.filter((r) => r.error === null).length;
  assert.ok(ok > 0, 'some requests completed before the interrupt');
  assert.equal(summary.request_count?.avg, ok);
  for (const r of records) {
    if (r.error === null) continue;
    assert.equal(r.error.code, 499, `only cancellations fail here: ${JSON.stringify(r.error)}`);
    assert.equal(r.error.kind, 'cancelled');
    assert.equal(r.metadata.censored, true, 'a request the run ended is censored, not a failure');
  }
  const tails = summary.tails_with_failures;
  assert.deepEqual([tails.censored, tails.failed], [records.length - ok, 0]);
  return records;
}

async function interruptOnce(signal: NodeJS.Signals): Promise<void> {
  const run = startRun(1);
  await waitForRecords(run, 3);
  const sim = simulatorPid(run.stderr());
  run.child.kill(signal);
  const { code } = await exitWithin(run);
  assert.equal(code, 130, run.stderr());
  const records = checkArtifacts(run);
  assert.ok(
    records.some((r) => r.error?.code === 499),
    'requests still running after the grace period are recorded as cancelled',
  );
  assert.ok(await waitGone(sim), `simulator child ${sim} is gone`);
}

test('SIGINT: drains for the grace period, cancels the rest (499), writes every artifact, exits 130', async () => {
  await interruptOnce('SIGINT');
});

test('SIGTERM behaves like the first Ctrl-C', async () => {
  await interruptOnce('SIGTERM');
});

test('double Ctrl-C: the second one cancels in-flight requests at once, long before the grace period ends', async () => {
  const graceSeconds = 600;
  const run = startRun(graceSeconds);
  await waitForRecords(run, 3);
  const sim = simulatorPid(run.stderr());
  run.child.kill('SIGINT');
  for (let waited = 0; waited < BOUND_MS && !run.stderr().includes('stopping'); waited += POLL_MS)
    await sleep(POLL_MS);
  run.child.kill('SIGINT');
  // Bounded well below the 600 s grace period: only the second Ctrl-C can end the run this soon.
  const { code } = await exitWithin(run);
  assert.equal(code, 130, run.stderr());
  const records = checkArtifacts(run);
  assert.ok(records.some((r) => r.error?.code === 499));
  assert.ok(await waitGone(sim), `simulator child ${sim} is gone`);
});
