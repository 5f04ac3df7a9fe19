/**
 * A streamed trace replay through the real CLI (from source) against the built-in simulator: a bad
 * row met after requests were sent stops issuing, keeps every record and the summary, names the
 * file and line, and exits 1; `--no-trace-streaming` finds the same row before sending anything.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

const ENTRY = 'test/helpers/cli-entry.ts';
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function bailianLine(chatId: number, timestampS: number): string {
  return JSON.stringify({
    chat_id: chatId,
    parent_chat_id: -1,
    timestamp: timestampS,
    input_length: 40,
    output_length: 5,
    type: 'text',
    turn: 1,
    hash_ids: [chatId * 10, chatId * 10 + 1, chatId * 10 + 2],
  });
}

/**
 * Rows at 0, 0.1 and 0.2 s, one at 3 s (beyond the 2 s read-ahead, so reading pauses), then a row
 * whose input_length is a string on line 5: the stream reaches it about 1 s into the run.
 */
function traceWithBadRow(dir: string): string {
  const file = join(dir, 'trace.jsonl');
  const bad = bailianLine(5, 3.5).replace('"input_length":40', '"input_length":"forty"');
  writeFileSync(
    file,
    `${[bailianLine(1, 0), bailianLine(2, 0.1), bailianLine(3, 0.2), bailianLine(4, 3), bad].join('\n')}\n`,
  );
  return file;
}

function runCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', ENTRY, ...args], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr })));
}

function profileArgs(trace: string, artifactDir: string, extra: string[] = []): string[] {
  return [
    'profile',
    '--simulator',
    '-m',
    'Qwen/Qwen3-0.6B',
    '--streaming',
    '--input-file',
    trace,
    '--custom-dataset-type',
    'bailian_trace',
    '--fixed-schedule',
    '--random-seed',
    '3',
    '--artifact-dir',
    artifactDir,
    ...extra,
  ];
}

test('a bad row met mid-replay: earlier requests recorded, summary written, file:line named, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const trace = traceWithBadRow(dir);
  const out = join(dir, 'out');
  const { code, stderr } = await runCli(profileArgs(trace, out));
  assert.equal(code, 1, stderr);
  assert.match(stderr, /error: .*trace\.jsonl:5: .*input_length/);
  const records = readFileSync(join(out, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(records.length, 3, 'the three rows due before the bad one were sent and recorded');
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.request_count.avg, 3);
  assert.equal(summary.replay.rows_read, 4);
  assert.match(summary.replay.input_error, /trace\.jsonl:5/);
  assert.equal(summary.run_status.status, 'failed');
  assert.equal(summary.run_status.exit_code, 1);
  assert.match(summary.run_status.reason, /^a bad trace row stopped the replay: .*trace\.jsonl:5/);
});

test('--no-trace-streaming reads the whole file first: the same bad row fails before any request', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const trace = traceWithBadRow(dir);
  const out = join(dir, 'out');
  const { code, stderr } = await runCli(profileArgs(trace, out, ['--no-trace-streaming']));
  assert.equal(code, 1, stderr);
  assert.match(stderr, /trace\.jsonl:5: .*input_length/);
  assert.equal(existsSync(join(out, 'profile_export.jsonl')), false);
});

test('--skip-bad-lines: the skipped count is in the summary JSON; a bad row in the first window leaves no records, and a summary that says the run failed', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const trace = traceWithBadRow(dir);
  const skipping = join(dir, 'skip');
  const ok = await runCli(profileArgs(trace, skipping, ['--skip-bad-lines']));
  assert.equal(ok.code, 0, ok.stderr);
  const summary = JSON.parse(readFileSync(join(skipping, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.request_count.avg, 4);
  assert.equal(summary.input_rows_skipped.bad_lines, 1);
  // Line 2 is bad: the stream meets it before the first send, so the run fails like a whole-file load.
  const early = join(dir, 'early.jsonl');
  writeFileSync(early, `${bailianLine(1, 0)}\n{"chat_id": 2,\n${bailianLine(3, 5)}\n`);
  const out = join(dir, 'early-out');
  const failed = await runCli(profileArgs(early, out));
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /early\.jsonl:2: not valid JSON/);
  assert.equal(existsSync(join(out, 'profile_export.jsonl')), false);
  assert.equal(existsSync(join(out, 'inputs.json')), false);
  // The run had started (its folder was set up): its summary says it failed, and why.
  const stopped = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(stopped.run_status.status, 'failed');
  assert.match(stopped.run_status.reason, /early\.jsonl:2: not valid JSON/);
});
