/**
 * A trace file with a line longer than any trace row (a newcomer passing the wrong file: model
 * weights, a binary dump) is refused naming the file and the line, by every reader of traces, and a
 * run leaves a summary saying why. Found by a new user: a 600 MB line killed the process with a bare
 * `RangeError` from inside the line reader and left an empty artifact folder.
 */
import assert from 'node:assert/strict';
import { closeSync, mkdtempSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const FIRST_ROW = readFileSync('examples/traces/bailian_traceA_stratified_head24.jsonl', 'utf8').split(
  '\n',
)[0];

/** A Bailian trace whose second line is `mib` MiB of one character, no newline. */
function traceWithHugeLine(dir: string, mib: number): string {
  const file = join(dir, 'huge.jsonl');
  const fd = openSync(file, 'w');
  writeSync(fd, `${FIRST_ROW}\n`);
  const block = Buffer.alloc(1024 * 1024, 'a');
  for (let i = 0; i < mib; i++) writeSync(fd, block);
  closeSync(fd);
  return file;
}

test('a line over 64 MiB is refused as file:line by analyze-trace and profile; the run writes a failed summary', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-huge-line-'));
  const file = traceWithHugeLine(dir, 65);
  const expected = new RegExp(`${file}:2: a line longer than 64 MiB`);
  const analyzed = await runCliInProcess(['analyze-trace', file, '--custom-dataset-type', 'bailian_trace']);
  assert.equal(analyzed.code, 1);
  assert.match(analyzed.stderr, expected);
  const runDir = join(dir, 'run');
  const profiled = await runCliInProcess([
    'profile',
    ...['-m', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin', '--url', 'http://127.0.0.1:9'],
    ...['--input-file', file, '--custom-dataset-type', 'bailian_trace', '--no-trace-streaming'],
    ...['--ui', 'none', '--artifact-dir', runDir],
  ]);
  assert.equal(profiled.code, 1);
  assert.match(profiled.stderr, expected);
  const summary = JSON.parse(readFileSync(join(runDir, 'profile_export_aiperf.json'), 'utf8')) as {
    run_status: { status: string; reason: string };
  };
  assert.equal(summary.run_status.status, 'failed');
  assert.match(summary.run_status.reason, expected);
});
