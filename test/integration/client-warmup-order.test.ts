/**
 * The client warm-up (`--client-warmup-ms`) runs only once the target has answered: a `--url` that
 * nothing listens on is refused (exit 1, naming it) before any warm-up is spent, while a target that
 * answers gets the warm-up and its log line. Through the CLI, in this process.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { freePort } from '../helpers/free-port.js';

const MODEL = 'm';
const COMMON = ['-m', MODEL, '--tokenizer', 'builtin', '--ui', 'none', '--client-warmup-ms', '200'];
let sim: RunningSimulator;
let work = '';

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL], warmupMs: 0 });
  work = mkdtempSync(join(tmpdir(), 'tokenload-warmup-order-'));
});
after(async () => {
  await sim?.close();
  rmSync(work, { recursive: true, force: true });
});

test('an unreachable --url is refused before the client warm-up runs', async () => {
  const port = await freePort();
  const r = await runCliInProcess([
    'profile',
    ...COMMON,
    '--url',
    `http://127.0.0.1:${port}`,
    '--request-count',
    '2',
    '--artifact-dir',
    join(work, 'unreachable'),
  ]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`error: .*127\\.0\\.0\\.1:${port}`));
  assert.doesNotMatch(r.stderr, /client warm-up/);
});

test('a target that answers gets the client warm-up, then the run', async () => {
  const r = await runCliInProcess([
    'profile',
    ...COMMON,
    '--url',
    sim.url,
    '--request-count',
    '2',
    '--artifact-dir',
    join(work, 'reachable'),
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /client warm-up: \d+ requests \(0 failed\)/);
});
