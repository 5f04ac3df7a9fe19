/**
 * `--request-cancellation-rate 100` with the default delay (0 s) cancels every request, in the
 * single-process client and in the worker pool alike: the cancel must not overtake the send (the pool
 * batches sends on a microtask; a cancel that fired before it was dropped and the request ran to its end).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RECORDS_FILE_NAME } from '../../src/export/index.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

let sim: Awaited<ReturnType<typeof startSimulator>>;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 50, itlMs: 5, defaultMaxTokens: 200 });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const workers of [1, 2]) {
  test(`every request is cancelled at rate 100 % and delay 0 (workers ${workers})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-cancel-'));
    dirs.push(dir);
    await runProfile(
      {
        models: ['m'],
        tokenizer: 'builtin',
        url: sim.url,
        streaming: true,
        concurrency: 4,
        requestCount: 20,
        requestCancellationRatePct: 100,
        workers,
        clientWarmupMs: 0,
        ui: 'none',
        artifactDir: dir,
        randomSeed: 1,
      },
      { log: { info: () => undefined, warn: () => undefined }, stopSignal: new AbortController().signal },
    );
    const records = readFileSync(join(dir, RECORDS_FILE_NAME), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(records.length, 20);
    for (const r of records) {
      assert.equal(r.metadata.was_cancelled, true);
      assert.equal(r.error?.code, 499);
    }
  });
}
