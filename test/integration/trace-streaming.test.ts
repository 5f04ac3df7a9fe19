/**
 * A streamed trace replay through the real CLI (the built one) against the built-in simulator: a bad
 * row stops reading, the rows read before it are still sent on their schedule, every record and the
 * summary are kept, the file and line are named, and the run exits 1 — also when the bad row is among
 * the rows read before the first send; only a bad first row fails before anything is sent.
 * `--no-trace-streaming` finds the same row before sending anything.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { runCliProcess } from '../helpers/cli-process.js';

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
 * whose input_length is a string on line 5: the stream reaches it about 1 s into the run, before
 * the row at 3 s is due.
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

function profileArgs(trace: string, artifactDir: string, extra: string[] = []): string[] {
  return [
    'profile',
    '--simulator',
    // No warm-ups (1 s of simulator and 0.5 s of client CPU a run) for five short requests.
    '--simulator-option',
    'warmup-ms=0',
    '--client-warmup-ms',
    '0',
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

test('a bad row the trace check reads before the replay: refused, file:line named, nothing sent, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const out = join(dir, 'out');
  const { code, stderr } = await runCliProcess(profileArgs(traceWithBadRow(dir), out));
  assert.equal(code, 1, stderr);
  assert.match(stderr, /error: .*trace\.jsonl:5: .*input_length/);
  assert.equal(existsSync(join(out, 'profile_export.jsonl')), false);
  // A replay that may stop before the bad row (a request count) is not refused at start: it sends
  // what it reaches (here its read-ahead meets the bad row after the three it sends).
  const counted = join(dir, 'counted');
  const r = await runCliProcess(profileArgs(traceWithBadRow(dir), counted, ['--request-count', '3']));
  assert.match(r.stderr, /trace check: stopped at a bad row \(.*trace\.jsonl:5/);
  assert.equal(readFileSync(join(counted, 'profile_export.jsonl'), 'utf8').trim().split('\n').length, 3);
});

test('a bad row met mid-replay (--no-trace-check): every row read before it sent and recorded, summary written, file:line named, exit 1', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const trace = traceWithBadRow(dir);
  const out = join(dir, 'out');
  const { code, stderr } = await runCliProcess(profileArgs(trace, out, ['--no-trace-check']));
  assert.equal(code, 1, stderr);
  assert.match(stderr, /error: .*trace\.jsonl:5: .*input_length/);
  const records = readFileSync(join(out, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(records.length, 4, 'the four rows read before the bad one, one due after it was read');
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.request_count.avg, 4);
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
  const { code, stderr } = await runCliProcess(profileArgs(trace, out, ['--no-trace-streaming']));
  assert.equal(code, 1, stderr);
  assert.match(stderr, /trace\.jsonl:5: .*input_length/);
  assert.equal(existsSync(join(out, 'profile_export.jsonl')), false);
});

test('--skip-bad-lines: the skipped count is in the summary JSON', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  const skipping = join(dir, 'skip');
  const ok = await runCliProcess(profileArgs(traceWithBadRow(dir), skipping, ['--skip-bad-lines']));
  assert.equal(ok.code, 0, ok.stderr);
  const summary = JSON.parse(readFileSync(join(skipping, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.request_count.avg, 4);
  assert.equal(summary.input_rows_skipped.bad_lines, 1);
});

test('a bad row among those read before the first send stops the replay the same way; a bad first row sends nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-stream-'));
  dirs.push(dir);
  // Line 3 is bad: the stream reads it before the first send (rows 1 and 2 are in the first 2 s).
  const early = join(dir, 'early.jsonl');
  writeFileSync(
    early,
    `${bailianLine(1, 0)}\n${bailianLine(2, 0.5)}\n{"chat_id": 3,\n${bailianLine(4, 5)}\n`,
  );
  const out = join(dir, 'early-out');
  const stopped = await runCliProcess(profileArgs(early, out, ['--no-trace-check']));
  assert.equal(stopped.code, 1, stopped.stderr);
  assert.match(stopped.stderr, /error: .*early\.jsonl:3: not valid JSON/);
  const records = readFileSync(join(out, 'profile_export.jsonl'), 'utf8').trim().split('\n');
  assert.equal(records.length, 2, 'the two rows read before the bad one were sent');
  const summary = JSON.parse(readFileSync(join(out, 'profile_export_aiperf.json'), 'utf8'));
  assert.equal(summary.replay.rows_read, 2);
  assert.match(summary.replay.input_error, /early\.jsonl:3: not valid JSON/);
  assert.match(summary.run_status.reason, /^a bad trace row stopped the replay: .*early\.jsonl:3/);
  // A bad first row: nothing can be sent, the run fails as a whole-file load does.
  const first = join(dir, 'first.jsonl');
  writeFileSync(first, `{"chat_id": 1,\n${bailianLine(2, 0.5)}\n`);
  const firstOut = join(dir, 'first-out');
  const failed = await runCliProcess(profileArgs(first, firstOut));
  assert.equal(failed.code, 1, failed.stderr);
  assert.match(failed.stderr, /first\.jsonl:1: not valid JSON/);
  assert.equal(existsSync(join(firstOut, 'profile_export.jsonl')), false);
  assert.equal(existsSync(join(firstOut, 'inputs.json')), false);
  // The run had started (its folder was set up): its summary says it failed, and why.
  const status = JSON.parse(readFileSync(join(firstOut, 'profile_export_aiperf.json'), 'utf8')).run_status;
  assert.equal(status.status, 'failed');
  assert.match(status.reason, /first\.jsonl:1: not valid JSON/);
});
