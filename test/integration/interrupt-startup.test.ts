/**
 * Ctrl-C during start-up (tokenizer load, warm-ups, simulator boot): nothing is measured, yet every
 * export is written — an empty record file, an empty inputs file, the summary marked cancelled (its
 * `run_status` interrupted) and the report — instead of a crash on the missing record file.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { profileConfig } from '../../src/run/config.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

const TRACE = 'examples/traces/bailian_traceA_stratified_head24.jsonl';
const silent = { info: () => undefined, warn: () => undefined };

for (const streamed of [true, false]) {
  test(`a stop before the first request (${streamed ? 'streamed trace' : 'whole-file load'}) still writes every export`, async () => {
    const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 }, { captureRequests: true });
    try {
      const dir = mkdtempSync(join(tmpdir(), 'tokenload-stop-'));
      const stop = new AbortController();
      stop.abort();
      const outcome = await runProfile(
        profileConfig({
          models: ['m'],
          tokenizer: 'builtin',
          url: target.url,
          streaming: true,
          randomSeed: 1,
          inputFile: TRACE,
          customDatasetType: 'bailian_trace',
          fixedSchedule: true,
          traceStreaming: streamed,
          clientWarmupMs: 100,
          artifactDir: dir,
        }),
        { log: silent, stopSignal: stop.signal },
      );
      assert.equal(outcome.wasCancelled, true);
      assert.equal(outcome.recordCount, 0);
      assert.equal(target.capturedRequests().length, 0);
      assert.equal(readFileSync(join(dir, 'profile_export.jsonl'), 'utf8'), '');
      assert.deepEqual(JSON.parse(readFileSync(join(dir, 'inputs.json'), 'utf8')), { data: [] });
      const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as {
        was_cancelled: boolean;
        run_status: { status: string; exit_code: number };
      };
      assert.equal(summary.was_cancelled, true);
      // Interrupted, not "no request succeeded": the stop, not the server, ended it.
      assert.deepEqual([summary.run_status.status, summary.run_status.exit_code], ['interrupted', 130]);
      assert.equal(outcome.status.status, 'interrupted');
      assert.ok(existsSync(join(dir, 'report.html')));
    } finally {
      await target.close();
    }
  });
}
