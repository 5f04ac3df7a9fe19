/**
 * The warm-up phase obeys the run's concurrency cap in every load mode (sglang#39398 sent 100
 * warm-up requests at once with a cap of 32): the built CLI runs 100 warm-up requests against a
 * loopback fixture player whose answers each take 150 ms, and the player counts the most requests
 * it held at once. The profiling phase sends one request, so the count is the warm-up's; the
 * summary's `load.warmup.most_in_flight` (the client's own count) is within the cap too.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCliProcess } from '../helpers/cli-process.js';
import { inlineFixture, startFixturePlayer } from '../helpers/fixture-player.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const CAP = 32;
const WARMUP = 100;

interface Summary {
  warmup_metrics: { request_count: { avg: number } };
  load: { warmup: { description: string; issued: number; most_in_flight: number } };
}

const SLOW_ANSWER = inlineFixture(
  'slow-answer',
  {
    status: 200,
    headers: { 'content-type': 'application/json' },
    delayMs: 150,
    body: {
      object: 'chat.completion',
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok then' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 12, completion_tokens: 2, total_tokens: 14 },
    },
  },
  { stream: false },
);

/** Runs `tokenload profile` with `load` against a fresh player; the most it held, and the summary. */
async function warmUpAgainstPlayer(load: string[]): Promise<{ most: number; summary: Summary }> {
  const player = await startFixturePlayer([SLOW_ANSWER]);
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-warmup-cap-'));
    const run = await runCliProcess([
      'profile',
      ...['--model', 'test-model', '--tokenizer', 'builtin', '--url', player.origin, '--ui', 'none'],
      ...['--client-warmup-ms', '0', '--no-server-metrics', '--artifact-dir', dir],
      ...['--warmup-request-count', String(WARMUP), ...load],
    ]);
    assert.equal(run.code, 0, run.stderr);
    return { most: player.mostHeld(), summary: readRunArtifacts<Summary>(dir).summary };
  } finally {
    await player.close();
  }
}

function checkWarmup(got: { most: number; summary: Summary }, description: string): void {
  assert.equal(got.summary.warmup_metrics.request_count.avg, WARMUP);
  assert.equal(got.summary.load.warmup.description, description);
  assert.ok(got.most <= CAP, `the server held ${got.most} requests at once, over the cap of ${CAP}`);
  const sent = got.summary.load.warmup.most_in_flight;
  assert.ok(
    sent <= CAP && sent >= got.most,
    `the summary's most in flight, ${sent}, against the server's ${got.most}`,
  );
}

test('closed-loop concurrency: 100 warm-up requests, never more than 32 at once', async () => {
  const got = await warmUpAgainstPlayer(['--concurrency', String(CAP), '--request-count', '1']);
  checkWarmup(got, `concurrency ${CAP}`);
});

test('a request rate with a concurrency cap: the warm-up keeps the cap', async () => {
  const got = await warmUpAgainstPlayer([
    ...['--request-rate', '2000', '--concurrency', String(CAP), '--request-count', '1'],
  ]);
  checkWarmup(got, `request rate 2000/s (poisson), at most ${CAP} sessions`);
});

test('a fixed schedule with a concurrency cap: the warm-up runs closed-loop at the cap', async () => {
  const trace = join(mkdtempSync(join(tmpdir(), 'tokenload-warmup-cap-trace-')), 'one.jsonl');
  writeFileSync(
    trace,
    `${JSON.stringify({ timestamp: 0, input_length: 16, output_length: 2, hash_ids: [1] })}\n`,
  );
  const got = await warmUpAgainstPlayer([
    ...['--input-file', trace, '--custom-dataset-type', 'mooncake_trace', '--concurrency', String(CAP)],
  ]);
  checkWarmup(got, `concurrency ${CAP}`);
});
