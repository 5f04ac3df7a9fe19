/**
 * Runs the `tokenload` CLI in this process (its `main`, as `bin/tokenload.js` calls it) and returns
 * its exit code and what it wrote to stderr: for tests that need no child process. From the sources
 * ({@link runCliInProcess}), or from the built package ({@link runBuiltCliInProcess}): what
 * `bin/tokenload.js` runs, and cheaper when a process runs many commands (the worker threads a run
 * starts then load the compiled files, not the sources through tsx: about 0.08 s of CPU a run).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureBuilt } from './built-package.js';
import { PROJECT_ROOT } from './test-cache.js';

/** What a CLI run in this process gave: its exit code and its stderr. */
export interface InProcessExit {
  code: number;
  stderr: string;
}

type CliMain = (argv: string[]) => Promise<number>;

/** Runs `tokenload <args>` from the sources in this process, capturing stderr while it runs. */
export async function runCliInProcess(args: readonly string[]): Promise<InProcessExit> {
  const { main } = await import('../../src/cli/main.js');
  return runMain(main, args);
}

let builtMain: Promise<CliMain> | undefined;

/**
 * Runs `tokenload <args>` from the built package (`dist/src`, built first when out of date) in this
 * process, capturing stderr while it runs. Its errors and classes are the built package's own.
 */
export async function runBuiltCliInProcess(args: readonly string[]): Promise<InProcessExit> {
  builtMain ??= (async () => {
    ensureBuilt();
    const url = pathToFileURL(join(PROJECT_ROOT, 'dist', 'src', 'cli', 'main.js')).href;
    return ((await import(url)) as { main: CliMain }).main;
  })();
  return runMain(await builtMain, args);
}

async function runMain(run: CliMain, args: readonly string[]): Promise<InProcessExit> {
  const chunks: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((c: string | Uint8Array) => {
    chunks.push(String(c));
    return true;
  }) as typeof process.stderr.write;
  try {
    const code = await run(['node', 'tokenload', ...args]);
    return { code, stderr: chunks.join('') };
  } finally {
    process.stderr.write = write;
  }
}
