/**
 * A cold server's first wave is visible in the start-up split, through the built CLI: the simulator
 * with `cold-start-requests=4` answers its first four requests 1.5 s late (a cold engine's first
 * batch) and every later one at once. Without a warm-up, the console's `Start-up:` line names the
 * first wave (the requests sent before the first answer) and a warning says it was much slower than
 * the rest and suggests `--warmup-request-count`; with a warm-up, the warm-up met the slow requests
 * and there is no note.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startSimulator } from '../../src/simulator/server.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const COLD_REQUESTS = 4;
const COLD_MS = 1500;

interface Summary {
  warnings: string[];
  start_up: { first_wave?: { requests: number; time_to_first_token_ms?: { p50: number } } };
  warmup_metrics?: { time_to_first_token: { max: number } };
}

/** Runs 3 s at concurrency 4 with `target` (`--url …` or `--simulator …`); the console text and summary. */
async function profileCold(target: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-cold-'));
  const run = await runCliProcess([
    'profile',
    ...['--model', 'm', '--tokenizer', 'builtin', '--streaming', '--ui', 'none', ...target],
    ...['--client-warmup-ms', '0', '--no-server-metrics', '--artifact-dir', dir],
    ...['--concurrency', String(COLD_REQUESTS), '--benchmark-duration', '3'],
  ]);
  assert.equal(run.code, 0, run.stderr);
  const text = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  return { text, summary: readRunArtifacts<Summary>(dir).summary };
}

test('--simulator with a cold start and its own warm-up off: the slow first wave is named and noted', async () => {
  const { text, summary } = await profileCold([
    '--simulator',
    ...['--simulator-option', 'warmup-ms=0', '--simulator-option', 'mode=fixed'],
    ...['--simulator-option', `cold-start-requests=${COLD_REQUESTS}`],
    ...['--simulator-option', `cold-start-ms=${COLD_MS}`],
  ]);
  const wave = summary.start_up.first_wave;
  assert.equal(wave?.requests, COLD_REQUESTS, 'the four requests sent before the first answer');
  assert.ok((wave?.time_to_first_token_ms?.p50 ?? 0) >= COLD_MS, JSON.stringify(wave));
  assert.match(
    text,
    /^Start-up: .*; first wave: 4 requests before the first answer, TTFT p50 [\d.]+ \/ max/m,
  );
  const notes = summary.warnings.filter((w) => w.startsWith('the first wave'));
  assert.equal(notes.length, 1, JSON.stringify(summary.warnings));
  assert.match(notes[0] as string, /no warm-up ran against the server.*--warmup-request-count N/);
  assert.match(text, /^Warning: the first wave \(4 requests sent before the first answer\) had TTFT p50/m);
});

test('with a warm-up, the warm-up meets the cold requests and there is no note', async () => {
  const sim = await startSimulator({
    mode: 'fixed',
    ttftMs: 2,
    itlMs: 1,
    coldStartRequests: COLD_REQUESTS,
    coldStartMs: COLD_MS,
  });
  try {
    const { text, summary } = await profileCold([
      ...['--url', sim.url, '--warmup-request-count', String(COLD_REQUESTS)],
    ]);
    assert.ok(
      (summary.warmup_metrics?.time_to_first_token.max ?? 0) >= COLD_MS,
      'the warm-up met the cold answers',
    );
    assert.deepEqual(
      summary.warnings.filter((w) => w.startsWith('the first wave')),
      [],
    );
    assert.doesNotMatch(text, /^Warning: the first wave/m);
  } finally {
    await sim.close();
  }
});
