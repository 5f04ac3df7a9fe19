/**
 * Ctrl-C during start-up (tokenizer load, warm-ups, simulator boot, waiting for the model): nothing is
 * measured, yet every export is written — an empty record file, an empty inputs file, the summary
 * marked cancelled (its `run_status` interrupted, saying nothing was sent) and the report — instead
 * of a crash on the missing record file. No connection is opened to the target and no client-health
 * verdict is given for a run that sent nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';
import { builtCli } from '../helpers/built-package.js';
import { freePort } from '../helpers/free-port.js';

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
      assertNothingJudged(dir);
    } finally {
      await target.close();
    }
  });
}

const NOTHING_SENT =
  'Interrupted (Ctrl-C or SIGTERM) before the first request: nothing was sent to the server, so nothing was measured';

/** What a run stopped before its first request shows: no verdict, no connections, "nothing was sent". */
function assertNothingJudged(dir: string): void {
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  assert.equal(summary.client_health, undefined, 'no client-health verdict for a run that sent nothing');
  assert.equal(summary.connections, undefined, 'no connection was pre-opened');
  assert.match(
    String((summary.run_status as { reason: string }).reason),
    /before the first request: nothing was sent/,
  );
  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  assert.ok(consoleText.includes(`${NOTHING_SENT}\n`), consoleText);
  assert.doesNotMatch(consoleText, /Client health|Connections:/);
  const report = readFileSync(join(dir, 'report.html'), 'utf8');
  assert.ok(report.includes(NOTHING_SENT));
  assert.doesNotMatch(report, /Client health/);
}

test('Ctrl-C while waiting for a model that never comes up: exit 130, nothing opened, nothing judged', async () => {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stop-wait-'));
  const child = spawn(
    process.execPath,
    [
      builtCli(),
      'profile',
      '-m',
      'm',
      '--tokenizer',
      'builtin',
      '--url',
      `127.0.0.1:${port}`,
      '--wait-for-model-timeout',
      '120',
      '--request-count',
      '4',
      '--ui',
      'none',
      '--artifact-dir',
      dir,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let signalled = false;
  child.stderr.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
    if (signalled || !stderr.includes('waiting for the server to serve')) return;
    signalled = true;
    child.kill('SIGINT');
  });
  child.stdout.resume();
  const code = await exit;
  assert.equal(code, 130, stderr);
  assert.doesNotMatch(
    stderr,
    /pre-opened|failed to open/,
    'no connection is opened to a run that sends nothing',
  );
  assertNothingJudged(dir);
});
