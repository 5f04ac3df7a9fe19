/**
 * An `--artifact-dir` the file system refuses fails at once, naming the folder and why, with
 * E_OUTPUT's exit code 1: under `/proc` (where Node's recursive mkdir spun forever on a thread-pool
 * thread, ignoring SIGTERM), and on a read-only file system (reported as ENOENT before). The
 * read-only one is a tmpfs mounted read-only in a user and mount namespace of its own (`unshare
 * -rm`), which works as root and as a user; the test is skipped where namespaces are not allowed.
 * Through the CLI, from the tree the test runs in (test/helpers/cli-entry.ts).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { childModule } from '../helpers/child-module.js';
import type { ProcessExit } from '../helpers/cli-process.js';

/** The CLI's entry from the tree this test runs in (sources through tsx, or compiled). */
const ENTRY = childModule(import.meta.url, '../helpers/cli-entry');
/** A run that gets as far as its folder: nothing is sent, the server is never asked. */
const PROFILE = ['profile', '-m', 'm', '--url', 'http://127.0.0.1:9', '--tokenizer', 'builtin'];
/** Longer than any start-up: a process still running then hangs (the bug), and is killed. */
const HANG_GUARD_MS = 120_000;

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `command args`, killed if it has not ended after {@link HANG_GUARD_MS}. */
function runGuarded(command: string, args: string[]): Promise<ProcessExit> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), HANG_GUARD_MS);
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    }),
  );
}

function tokenload(artifactDir: string): Promise<ProcessExit> {
  return runGuarded(process.execPath, [
    ...ENTRY.execArgv,
    ENTRY.path,
    ...PROFILE,
    '--artifact-dir',
    artifactDir,
  ]);
}

test('a folder under /proc: refused at once with the reason, exit 1 (it hung a core before)', async () => {
  for (const dir of ['/proc/self/tokenload-run', '/proc/tokenload-run']) {
    const r = await tokenload(dir);
    assert.equal(r.code, 1, `${dir}: ${r.stderr}`);
    assert.match(
      r.stderr,
      new RegExp(
        `^error: --artifact-dir ${dir}: cannot create the folder \\(ENOENT: the file system does not let files or folders be created there, as /proc and /sys do not\\)$`,
        'm',
      ),
    );
  }
  // An existing folder there: it cannot be written in.
  const r = await tokenload('/proc/self');
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /^error: --artifact-dir \/proc\/self: cannot write in the folder \(ENOENT: /m);
});

const NAMESPACES = spawnSync('unshare', ['-rm', 'true']).status === 0;

test('a folder on a read-only file system: "read-only", naming the folder, exit 1 (ENOENT before)', {
  skip: NAMESPACES ? false : 'needs `unshare -rm` (user and mount namespaces)',
}, async () => {
  const mount = mkdtempSync(join(tmpdir(), 'tokenload-ro-'));
  dirs.push(mount);
  const cli = ['node', ...ENTRY.execArgv, ENTRY.path, ...PROFILE].map((a) => `'${a}'`).join(' ');
  const script = [
    `mount -t tmpfs -o ro tmpfs '${mount}' || exit 99`,
    `${cli} --artifact-dir '${mount}/run'; echo "exit=$?" >&2`,
    `${cli} --artifact-dir '${mount}'; echo "exit=$?" >&2`,
  ].join('\n');
  const r = await runGuarded('unshare', ['-rm', 'sh', '-c', script]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stderr.split('\n').filter((l) => /^(error|exit)/.test(l));
  assert.deepEqual(lines, [
    `error: --artifact-dir ${mount}/run: cannot create the folder (EROFS: the file system is read-only)`,
    'exit=1',
    `error: --artifact-dir ${mount}: cannot write in the folder (EROFS: the file system is read-only)`,
    'exit=1',
  ]);
});
