/**
 * Where tokenload's default differs from AIPerf's on a fixed schedule: with auto-offset (tokenload's
 * default) a trace whose first timestamp is 58 s starts at once, and the console says that AIPerf
 * would have waited 58.0 s and how to wait; a trace starting within 1 s of zero, or a replay with
 * `--no-fixed-schedule-auto-offset`, gets no such line. The replays read the console, not times:
 * no client warm-up (`--client-warmup-ms 0`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';

const LINE =
  /^Fixed schedule: starting at once; AIPerf waits ([\d.]+) s for the first timestamp; --no-fixed-schedule-auto-offset to wait$/m;

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 1, tokenizer: 'builtin' });
});
after(() => sim.close());

/** Replays three Mooncake rows starting at `firstMs` (100 ms apart); returns the console text and exit code. */
async function replay(
  firstMs: number,
  extra: readonly string[] = [],
): Promise<{ code: number; console: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-fs-start-'));
  const trace = join(dir, 'trace.jsonl');
  const rows = [0, 100, 200].map((d) => ({
    timestamp: firstMs + d,
    input_length: 32,
    output_length: 2,
    hash_ids: [d],
  }));
  writeFileSync(trace, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const out = join(dir, 'run');
  const { code, stderr } = await runCliInProcess([
    'profile',
    ...['--model', 'Qwen/Qwen3-0.6B', '--tokenizer', 'builtin', '--streaming', '--url', sim.url],
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--fixed-schedule'],
    ...['--artifact-dir', out, '--ui', 'none', '--client-warmup-ms', '0', ...extra],
  ]);
  assert.equal(code, 0, stderr);
  return { code, console: readFileSync(join(out, 'profile_export_console.txt'), 'utf8') };
}

test('a trace starting at 58 s: the console says AIPerf would wait 58.0 s for it', async () => {
  const { console } = await replay(58_000);
  assert.equal(LINE.exec(console)?.[1], '58.0');
});

test('a trace starting within 1 s of zero, or with --no-fixed-schedule-auto-offset: no such line', async () => {
  assert.doesNotMatch((await replay(500)).console, LINE);
  assert.doesNotMatch((await replay(1_000, ['--no-fixed-schedule-auto-offset'])).console, LINE);
});
