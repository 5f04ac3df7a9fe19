/**
 * A child process of test/integration/aiperf-conformance.test.ts: runs the AIPerf documented
 * commands it is given, one after another, as `tokenload profile` in this process (the built CLI's
 * `main`, as `bin/tokenload.js` runs it: test/helpers/cli-in-process.ts),
 * each in a temporary folder of its own that is also the working directory while it runs, and sends
 * the parent one {@link WorkerResult} per row over IPC. Running the rows in a few such processes
 * lets them overlap (each process has one working directory and one stderr to capture).
 *
 *     fork(this file, [JSON of the simulator URLs, 'page#index', ...], { execArgv }) (test/helpers/child-module.ts)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Classified,
  classify,
  type DocCommand,
  loadCommands,
  prepareCommand,
  rowName,
} from './aiperf-docs.js';
import { runBuiltCliInProcess } from './cli-in-process.js';

/**
 * Added after each row's arguments: the client warm-up (half a second of requests against an
 * in-process simulator before each run, `--client-warmup-ms` 500 by default) only readies this
 * process's code, sends nothing to the target and changes no count or class; the rows run one
 * after another in a few processes whose code is warm after the first.
 */
const NO_CLIENT_WARMUP = ['--client-warmup-ms', '0'];

/** What one row gave: `needs-file` with its reason, or the class of its run. */
export type WorkerResult = { name: string; supplied: string[] } & (
  | { kind: 'needs-file'; detail: string }
  | ({ kind: 'run' } & Classified)
);

/** Runs `row` the way `npm run conformance` runs it, against `urls`, in this process. */
export async function runDocRow(row: DocCommand, urls: readonly string[]): Promise<WorkerResult> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-conformance-'));
  const cwd = process.cwd();
  const savedEnv = { ...process.env };
  const name = rowName(row);
  try {
    const prepared = prepareCommand(row, urls, dir);
    if (prepared.kind === 'needs-file')
      return { name, supplied: [], kind: 'needs-file', detail: prepared.detail };
    Object.assign(process.env, prepared.env);
    process.chdir(dir);
    const run = await runBuiltCliInProcess([...prepared.args, ...NO_CLIENT_WARMUP]);
    const got = classify(row, { ...run, timedOut: false, dir }, prepared.fragment);
    return { name, supplied: prepared.supplied, kind: 'run', ...got };
  } finally {
    process.chdir(cwd);
    for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [urlsJson, ...names] = process.argv.slice(2);
  const urls = JSON.parse(urlsJson ?? '[]') as string[];
  const byName = new Map(loadCommands().map((r) => [rowName(r), r]));
  for (const name of names) {
    const row = byName.get(name);
    if (row === undefined) throw new Error(`no row ${name}`);
    const result = await runDocRow(row, urls);
    await new Promise<void>((resolve, reject) =>
      process.send?.(result, (e: Error | null) => (e ? reject(e) : resolve())),
    );
  }
  process.exit(0);
}

if (process.send !== undefined) await main();
