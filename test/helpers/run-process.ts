/**
 * Runs a Node process (the CLI from source through tsx, or the built `bin/tokenload.js`) to its
 * exit, keeping what it printed, for tests that need a real process.
 */
import { spawn } from 'node:child_process';

/** How a process ended and what it printed. */
export interface ProcessExit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node args…` (stdin closed) and resolves when it exits. */
export function runNode(args: readonly string[]): Promise<ProcessExit> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}
