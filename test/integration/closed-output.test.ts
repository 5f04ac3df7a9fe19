/**
 * A reader that goes away (`tokenload profile --help | head -1`) does not crash the CLI: the write
 * that finds the pipe closed is dropped and the command ends with its own exit code.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { test } from 'node:test';
import { builtCli } from '../helpers/built-package.js';

test('--help into a pipe closed before it is read exits 0 without an EPIPE crash', async () => {
  const child = spawn(process.execPath, [builtCli(), 'profile', '--help'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The reading end is closed before the CLI writes its help: its write gets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  assert.equal(code, 0, stderr);
  assert.doesNotMatch(stderr, /EPIPE|Unhandled/);
});
