/**
 * Runs the `tokenload` CLI in this process (its `main`, as `bin/tokenload.js` calls it) and returns
 * its exit code and what it wrote to stderr: for tests that need no child process.
 */
import { main } from '../../src/cli/main.js';

/** What a CLI run in this process gave: its exit code and its stderr. */
export interface InProcessExit {
  code: number;
  stderr: string;
}

/** Runs `tokenload <args>` in this process, capturing stderr while it runs. */
export async function runCliInProcess(args: readonly string[]): Promise<InProcessExit> {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await main(['node', 'tokenload', ...args]);
    return { code, stderr: chunks.join('') };
  } finally {
    process.stderr.write = write;
  }
}
