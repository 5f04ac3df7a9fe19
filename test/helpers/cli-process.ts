/**
 * Runs the `tokenload` CLI from source in a child process (`test/helpers/cli-entry.ts`), as a user
 * runs it, and returns its exit code and what it wrote to stdout and stderr.
 */
import { spawn } from 'node:child_process';

const ENTRY = 'test/helpers/cli-entry.ts';

/**
 * Runs `tokenload <args>` and resolves once the process has exited and closed its output.
 * @param env the child's whole environment (default: this process's).
 */
export function runCliProcess(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env,
  });
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
