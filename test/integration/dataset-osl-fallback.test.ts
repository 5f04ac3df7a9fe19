/**
 * `--osl` / `--osl-stddev` with an `--input-file`: rows without their own `output_length` are sent
 * with that output length (AIPerf's fallback), rows with one keep theirs, and a verbatim body is
 * never changed. Through the CLI against the simulator; a user reads `requested_output_tokens` and
 * the output length the server produced in `profile_export.jsonl`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { type ExportedRecord, readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
let sim: RunningSimulator;
let work = '';

before(async () => {
  sim = await startSimulator(
    { mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL] },
    { captureRequests: true },
  );
  work = mkdtempSync(join(tmpdir(), 'tokenload-osl-'));
});
after(async () => {
  await sim?.close();
});

function file(name: string, rows: unknown[]): string {
  const path = join(work, name);
  writeFileSync(path, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return path;
}

async function profile(name: string, args: string[]): Promise<ExportedRecord[]> {
  const dir = join(work, name);
  const r = await runCliInProcess([
    'profile',
    '-m',
    MODEL,
    '--url',
    sim.url,
    '--client-warmup-ms',
    '0',
    '--ui',
    'none',
    '--artifact-dir',
    dir,
    ...args,
  ]);
  assert.equal(r.code, 0, r.stderr);
  return readRunArtifacts(dir).records;
}

/** [requested, produced] output length of each record, in send order. */
function lengthsInSendOrder(records: ExportedRecord[]): Array<[unknown, unknown]> {
  return [...records]
    .sort((a, b) =>
      BigInt(String(a.metadata.request_start_ns)) < BigInt(String(b.metadata.request_start_ns)) ? -1 : 1,
    )
    .map((r) => [r.metadata.requested_output_tokens, r.metrics.output_sequence_length?.value]);
}

test('single_turn: rows without output_length get --osl, a row with one keeps it', async () => {
  const input = file('single.jsonl', [
    { text: 'What is machine learning?' },
    { text: 'Explain neural networks.', output_length: 9 },
    { text: 'How does backpropagation work?' },
  ]);
  const records = await profile('single', [
    '--input-file',
    input,
    '--custom-dataset-type',
    'single_turn',
    '--conversation-num',
    '3',
    '--osl',
    '5',
    '--concurrency',
    '1',
  ]);
  // Requested as the row says, else --osl; the simulator produced exactly that many tokens.
  assert.deepEqual(lengthsInSendOrder(records), [
    [5, 5],
    [9, 9],
    [5, 5],
  ]);
});

test('without --osl a row without output_length is sent with no max tokens', async () => {
  const input = file('plain.jsonl', [{ text: 'hello there' }]);
  const records = await profile('plain', [
    '--input-file',
    input,
    '--custom-dataset-type',
    'single_turn',
    '--conversation-num',
    '1',
  ]);
  assert.equal(records[0]?.metadata.requested_output_tokens, null);
  const body = JSON.parse(sim.capturedRequests().at(-1)?.body ?? '{}');
  assert.equal('max_completion_tokens' in body, false);
});

test('--osl-stddev: drawn lengths are seeded (the same seed gives the same requests), rows with a length untouched', async () => {
  const rows = Array.from({ length: 8 }, (_, i) => ({ text: `question number ${i}` }));
  const input = file('spread.jsonl', [...rows, { text: 'fixed row', output_length: 3 }]);
  const args = [
    '--input-file',
    input,
    '--custom-dataset-type',
    'single_turn',
    '--conversation-num',
    '9',
    '--osl',
    '20',
    '--osl-stddev',
    '6',
  ];
  const requested = async (name: string, seed: string) =>
    (await profile(name, [...args, '--random-seed', seed, '--concurrency', '1'])).map(
      (r) => r.metadata.requested_output_tokens as number,
    );
  const first = await requested('spread-1', '11');
  const again = await requested('spread-2', '11');
  assert.deepEqual(again, first);
  assert.equal(first.at(-1), 3);
  const drawn = first.slice(0, -1);
  assert.ok(
    drawn.every((n) => Number.isInteger(n) && n >= 1),
    String(drawn),
  );
  assert.ok(new Set(drawn).size > 1, `a stddev of 6 drew one value for 8 rows: ${drawn}`);
});

test('mooncake text rows streamed on their timestamps get --osl too', async () => {
  const input = file('mooncake.jsonl', [
    { timestamp: 0, text_input: 'first prompt here' },
    { timestamp: 5, text_input: 'second prompt here', output_length: 4 },
  ]);
  const records = await profile('mooncake', [
    '--input-file',
    input,
    '--custom-dataset-type',
    'mooncake_trace',
    '--osl',
    '6',
  ]);
  assert.deepEqual(lengthsInSendOrder(records), [
    [6, 6],
    [4, 4],
  ]);
});
