/**
 * AIPerf's documented `aiperf profile` commands (test/fixtures/aiperf-docs/commands.json), run as
 * `tokenload profile` against the simulator, keep the class `npm run conformance` gave them: each row
 * with an `expect.class` is run the way the runner runs it (same argument rewriting, plus
 * `--client-warmup-ms 0`: see test/helpers/aiperf-docs-worker.ts; one simulator
 * per distinct server the command names, same simulator timing, same offline tokenizer, the same
 * sample file where the row says `supplied`) and must fall in that class again (a fragment also in
 * its `completed` class), with the page's stated request count in both profile_export.jsonl and the
 * summary when it `works`. The simulators run in this process; the commands run in {@link JOBS}
 * child processes (test/helpers/aiperf-docs-worker.ts), each running its share one after another in
 * its own process (a CLI run in a process owns its working directory and stderr), so their waits
 * overlap. Rows without an `expect.class` (`long` runs and runs over 5 s) are left to the runner;
 * `npm run conformance -- --set-expect` refreshes the classes after a merge.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { loadCommands, rowName, serverCount } from '../helpers/aiperf-docs.js';
import type { WorkerResult } from '../helpers/aiperf-docs-worker.js';
import { childModule } from '../helpers/child-module.js';

const rows = loadCommands().filter((r) => r.expect?.class !== undefined);
/** One simulator for each distinct server the most a row names (multi-url-load-balancing.md: 4). */
const servers = Math.max(1, ...rows.map(serverCount));
/** Child processes running the rows. */
const JOBS = 2;
/** The worker module, in the form this test runs in (sources or compiled: test/helpers/child-module.ts). */
const WORKER = childModule(import.meta.url, '../helpers/aiperf-docs-worker');

/** Each row's result, settled when its worker sends it (or fails). */
const pending = new Map(
  rows.map((r) => {
    let settle!: { resolve: (v: WorkerResult) => void; reject: (e: Error) => void };
    const promise = new Promise<WorkerResult>((resolve, reject) => {
      settle = { resolve, reject };
    });
    promise.catch(() => undefined); // rejected rows fail in their own test
    return [rowName(r), { promise, ...settle }] as const;
  }),
);

/** Starts one worker on `names`; a worker that ends early fails the rows it had left. */
function startWorker(urls: string[], names: string[]): ChildProcess {
  const child = fork(WORKER.path, [JSON.stringify(urls), ...names], {
    // From the sources, tsx by its path: a row runs with a temporary folder as the working directory,
    // where the worker threads of the built CLI (which inherit this flag) would not find the bare name.
    execArgv: WORKER.execArgv,
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString('utf8')).slice(-4000);
  });
  child.on('message', (m: WorkerResult) => pending.get(m.name)?.resolve(m));
  child.once('exit', (code) => {
    for (const name of names) pending.get(name)?.reject(new Error(`worker exited ${code}: ${stderr}`));
  });
  return child;
}

describe('AIPerf documented commands keep their conformance class', () => {
  const sims: RunningSimulator[] = [];
  const workers: ChildProcess[] = [];
  before(async () => {
    for (let i = 0; i < servers; i++) {
      // The runner's SIMULATOR_ARGS, as options.
      sims.push(
        await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 0.5, tokensPerChunk: 10, warmupMs: 0 }),
      );
    }
    const urls = sims.map((s) => s.url);
    for (let j = 0; j < JOBS; j++) {
      workers.push(startWorker(urls, rows.filter((_, i) => i % JOBS === j).map(rowName)));
    }
  });
  after(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    for (const sim of sims) await sim.close();
  });

  test('the corpus has rows to hold', () => {
    assert.ok(rows.length > 0);
  });

  for (const row of rows) {
    test(rowName(row), { timeout: 120_000 }, async () => {
      const got = await pending.get(rowName(row))!.promise;
      if (got.kind === 'needs-file') {
        assert.equal('needs-file', row.expect?.class, got.detail);
        return;
      }
      // A run on a sample file says so in its row.
      assert.deepEqual(got.supplied, row.supplied ?? []);
      assert.equal(got.class, row.expect?.class, `${got.class}: ${got.detail}`);
      assert.equal(got.completed, row.expect?.completed, `completed: ${got.detail}`);
      if (got.class === 'works' && row.stated !== undefined) {
        assert.equal(got.records, row.stated.requests, row.stated.quote);
        assert.equal(got.requestCount, row.stated.requests, row.stated.quote);
      }
    });
  }
});
