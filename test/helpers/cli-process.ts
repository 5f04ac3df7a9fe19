/**
 * Runs the `tokenload` CLI in a child process, as a user runs it — the built `bin/tokenload.js`
 * (built first when `dist/` is not current: test/helpers/built-package.ts) or any Node command
 * line — and returns its exit code and what it wrote to stdout and stderr.
 */
import { spawn } from 'node:child_process';
import { builtCli } from './built-package.js';

/** How a process ended and what it printed. */
export interface ProcessExit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `tokenload <args>` (the built CLI) and resolves once the process has exited and closed its output.
 * @param env the child's whole environment (default: this process's).
 */
export function runCliProcess(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ProcessExit> {
  return runNodeProcess([builtCli(), ...args], env);
}

/**
 * Runs `node <args>` (stdin closed) and resolves once the process has exited and closed its output.
 * @param env the child's whole environment (default: this process's).
 */
export function runNodeProcess(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProcessExit> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}
