/** Runs a Node.js child process to its end and collects what it printed. */
import { type ChildProcess, spawn } from 'node:child_process';

/** How a child ended and what it printed. */
export interface NodeExit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node ...args` (stdin closed); kills it after `boundMs`; `onStart` gets the child (to signal it). */
export function runNode(
  args: readonly string[],
  boundMs = 120_000,
  onStart?: (child: ChildProcess) => void,
): Promise<NodeExit> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  onStart?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => {
    stdout += b.toString('utf8');
  });
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const bound = setTimeout(() => child.kill('SIGKILL'), boundMs);
  return new Promise((resolve) =>
    child.once('exit', (code) => {
      clearTimeout(bound);
      resolve({ code, stdout, stderr });
    }),
  );
}
