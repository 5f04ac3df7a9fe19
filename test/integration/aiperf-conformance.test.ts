/**
 * AIPerf's documented `aiperf profile` commands (test/fixtures/aiperf-docs/commands.json), run as
 * `tokenload profile` against the simulator, keep the class `npm run conformance` gave them: each row
 * with an `expect.class` is run the way the runner runs it (same argument rewriting, same simulator
 * timing, same offline tokenizer), in this process, and must fall in that class again, with the
 * page's stated request count in both profile_export.jsonl and the summary when it `works`. Rows
 * without an `expect.class` (long runs, and commands other branches are changing) are left to the
 * runner; `npm run conformance -- --update-expect` refreshes the classes after a merge.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { classify, loadCommands, prepareCommand, rowName, serverCount } from '../helpers/aiperf-docs.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const rows = loadCommands().filter((r) => r.expect?.class !== undefined);
/** One simulator for each distinct server the most a row names (multi-url-load-balancing.md: 4). */
const servers = Math.max(1, ...rows.map(serverCount));

describe('AIPerf documented commands keep their conformance class', () => {
  const sims: RunningSimulator[] = [];
  before(async () => {
    for (let i = 0; i < servers; i++) {
      // The runner's SIMULATOR_ARGS, as options.
      sims.push(
        await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 0.5, tokensPerChunk: 10, warmupMs: 0 }),
      );
    }
  });
  after(async () => {
    for (const sim of sims) await sim.close();
  });

  test('the corpus has rows to hold', () => {
    assert.ok(rows.length > 0);
  });

  for (const row of rows) {
    test(rowName(row), { timeout: 120_000 }, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'tokenload-conformance-'));
      const cwd = process.cwd();
      const savedEnv = { ...process.env };
      try {
        const prepared = prepareCommand(
          row,
          sims.map((s) => s.url),
          dir,
        );
        if (prepared.kind === 'needs-file') {
          assert.equal('needs-file', row.expect?.class, prepared.detail);
          return;
        }
        // A run on a sample file says so in its row.
        assert.deepEqual(prepared.supplied, row.supplied ?? []);
        Object.assign(process.env, prepared.env);
        process.chdir(dir);
        const run = await runCliInProcess(prepared.args);
        const got = classify(row, { ...run, timedOut: false, dir }, prepared.fragment);
        assert.equal(got.class, row.expect?.class, `${got.class}: ${got.detail}`);
        assert.equal(got.completed, row.expect?.completed, `completed: ${got.detail}`);
        if (got.class === 'works' && row.stated !== undefined) {
          assert.equal(got.records, row.stated.requests, row.stated.quote);
          assert.equal(got.requestCount, row.stated.requests, row.stated.quote);
        }
      } finally {
        process.chdir(cwd);
        for (const key of Object.keys(process.env)) if (!(key in savedEnv)) delete process.env[key];
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
