/**
 * The client-health verdict and the calibration as a user meets them, through the real CLI (the
 * built one) against the built-in simulator: a bursty trace's summary carries the floor the run measured
 * and its bursts, with a verdict from the defined set; a calibration whose lowest step failed does not
 * make `profile` warn "exceeds 0 req/s"; `calibrate` writes floor-judged steps and no 0 ceiling.
 * Nothing here depends on how late this machine's sends are.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { FLOOR_WAKEUPS } from '../../src/health/client-floor.js';
import { runCliProcess } from '../helpers/cli-process.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-health-'));
  dirs.push(dir);
  return dir;
}

/** Runs the CLI with HOME at `home` (where `profile` looks for the calibration file). */
function runCli(
  args: string[],
  home: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCliProcess(args, { ...process.env, HOME: home });
}

const FAST_SIMULATOR = ['--simulator', '--simulator-option', 'mode=fixed', '--simulator-option', 'ttftMs=0'];

/** Three bursts of 8 one-turn sessions, each burst on one trace timestamp, 0.2 s apart. */
function burstyTrace(dir: string): string {
  const lines = [];
  for (let id = 0; id < 24; id++) {
    const row = { chat_id: id, parent_chat_id: -1, timestamp: Math.floor(id / 8) * 0.2, input_length: 32 };
    lines.push(
      JSON.stringify({ ...row, output_length: 4, type: 'text', turn: 1, hash_ids: [id * 2, id * 2 + 1] }),
    );
  }
  const file = join(dir, 'bursts.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const STATUSES = ['ok', 'busy', 'late', 'saturated'];

test("a bursty replay's client_health has the run's floor, its largest burst and a verdict from the set", async () => {
  const dir = tempDir();
  const out = join(dir, 'run');
  const args = [
    'profile',
    ...FAST_SIMULATOR,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--streaming',
    '--ui',
    'none',
    '--artifact-dir',
    out,
  ];
  const r = await runCli(
    [...args, '--input-file', burstyTrace(dir), '--custom-dataset-type', 'bailian_trace', '--fixed-schedule'],
    dir,
  );
  assert.equal(r.code, 0, r.stderr);
  const health = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8')).client_health;
  assert.equal(health.wake_floor_ms.count, FLOOR_WAKEUPS);
  assert.ok(health.idle_loop_delay_ms.p99 > 0);
  assert.equal(health.late_sends.largest_burst, 8);
  assert.ok(STATUSES.includes(health.status), health.status);
  assert.equal(health.saturated, health.status === 'saturated');
  assert.equal('late_cause' in health, health.status === 'late');
  assert.ok(health.verdict.startsWith(health.status), health.verdict);
  assert.match(health.verdict, new RegExp(`wake floor p99 ${health.wake_floor_ms.p99} \\+ 2`));
  assert.match(r.stdout, new RegExp(`^Client health: ${health.status}`, 'm'));
});

test('a calibration whose lowest step failed does not make profile warn "exceeds 0 req/s"', async () => {
  const home = tempDir();
  mkdirSync(join(home, '.cache', 'tokenload'), { recursive: true });
  const calibration = { schemaVersion: 2, measuredAt: '2026-12-01T00:00:00Z', maxRequestRatePerS: null };
  writeFileSync(
    join(home, '.cache', 'tokenload', 'calibration.json'),
    JSON.stringify({ ...calibration, rateSteps: [{ target: 50 }], streamSteps: [] }),
  );
  const args = [
    'profile',
    ...FAST_SIMULATOR,
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--ui',
    'none',
    '--request-count',
    '6',
  ];
  const r = await runCli([...args, '--request-rate', '60', '--artifact-dir', join(home, 'run')], home);
  assert.equal(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /exceeds 0 req\/s/);
  assert.match(r.stderr, /--request-rate 60: this machine's rate ceiling is below 50 req\/s/);
});

test('calibrate judges each step against its own floor and never saves a 0 ceiling', async () => {
  const home = tempDir();
  const file = join(home, 'calibration.json');
  const args = [
    'calibrate',
    '--seconds',
    '0.5',
    '--max-rate',
    '100',
    '--max-streams',
    '100',
    '--output',
    file,
  ];
  const r = await runCli(args, home);
  assert.equal(r.code, 0, r.stderr);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(saved.schemaVersion, 2);
  assert.notEqual(saved.maxRequestRatePerS, 0);
  for (const s of [...saved.rateSteps, ...saved.streamSteps]) {
    assert.equal(typeof s.wakeFloorP99Ms, 'number');
    assert.equal(typeof s.limitMs, 'number');
  }
  assert.match(
    r.stdout,
    /^Max request rate \(send lag p99 ≤ wake floor p99 \+ 2 ms\): (\d+ req\/s|below the lowest step \(50 req\/s\))$/m,
  );
  assert.doesNotMatch(r.stdout, /: 0 req\/s/);
  assert.match(r.stdout, /tokenload profile reads only .*calibration\.json, not this file/);
});
