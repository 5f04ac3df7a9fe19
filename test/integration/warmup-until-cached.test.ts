/**
 * `--warmup-until-cached` through the built CLI: the warm-up runs again, the same requests, until the
 * server reports cached prompt tokens (`usage.prompt_tokens_details.cached_tokens` > 0), at most
 * `--warmup-max-rounds` times. The simulator with its prefix cache on reports them from the second
 * round; with `prefix-cache=false` it reports 0 every time; a fixture server never carries the
 * field (unknown, not 0), so the rounds stop after the first. Each outcome is one console line and
 * `load.warmup.until_cached` (with why the rounds `stopped`).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { inlineFixture, startFixturePlayer } from '../helpers/fixture-player.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

interface Summary {
  warmup_metrics: { request_count: { avg: number } };
  load: {
    warmup: {
      issued: number;
      until_cached?: {
        max_rounds: number;
        rounds: number;
        cached_in_round: number | null;
        requests: number;
        reporting_cached_tokens: number;
        with_cached_tokens: number;
        stopped: string;
      };
    };
  };
}

let cached: RunningSimulator;
let uncached: RunningSimulator;
before(async () => {
  [cached, uncached] = await Promise.all([
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1 }),
    startSimulator({ mode: 'fixed', ttftMs: 2, itlMs: 1, prefixCache: false }),
  ]);
});
after(() => Promise.all([cached.close(), uncached.close()]));

/** Runs a warm-up of 8 requests at concurrency 4 against `url`, then 4 profiling requests. */
async function warmUp(url: string, model: string, extra: string[]) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-until-cached-'));
  const run = await runCliProcess([
    'profile',
    ...['--model', model, '--tokenizer', 'builtin', '--url', url, '--ui', 'none', '--client-warmup-ms', '0'],
    ...['--no-server-metrics', '--artifact-dir', dir, '--concurrency', '4', '--request-count', '4'],
    ...['--warmup-request-count', '8', ...extra],
  ]);
  assert.equal(run.code, 0, run.stderr);
  const consoleText = readFileSync(join(dir, 'profile_export_console.txt'), 'utf8');
  const line = consoleText.split('\n').filter((l) => l.startsWith('Warm-up:'));
  assert.equal(line.length, 1, consoleText);
  const { summary, records } = readRunArtifacts<Summary>(dir);
  return { line: line[0] as string, summary, records, stderr: run.stderr };
}

test('the simulator reports cached tokens in the second round: the warm-up stops there', async () => {
  const run = await warmUp(cached.url, 'm', ['--warmup-until-cached']);
  assert.equal(
    run.line,
    'Warm-up: the server reported cached tokens in round 2 of at most 3 (--warmup-until-cached; 8 of the 16 warm-up requests of 2 rounds answered with usage.prompt_tokens_details.cached_tokens > 0)',
  );
  assert.deepEqual(run.summary.load.warmup.until_cached, {
    max_rounds: 3,
    rounds: 2,
    cached_in_round: 2,
    requests: 16,
    reporting_cached_tokens: 16,
    with_cached_tokens: 8,
    stopped: 'cached_tokens_reported',
  });
  assert.equal(run.summary.load.warmup.issued, 16);
  assert.equal(run.summary.warmup_metrics.request_count.avg, 16);
  assert.equal(run.records.length, 4, 'no warm-up request in profile_export.jsonl');
  assert.match(
    run.stderr,
    /warmup round 1: 8 requests, 8 answers carried usage\.prompt_tokens_details\.cached_tokens, 0 of them > 0/,
  );
});

test('a server whose prefix cache is off reports 0 every round: the warm-up stops at --warmup-max-rounds and says so', async () => {
  const run = await warmUp(uncached.url, 'm', ['--warmup-until-cached', '--warmup-max-rounds', '2']);
  assert.match(
    run.line,
    /^Warm-up: the server never reported cached tokens in 2 rounds .*cached_tokens was 0 in all 16 answers that carried it/,
  );
  assert.equal(run.summary.load.warmup.until_cached?.rounds, 2);
  assert.equal(run.summary.load.warmup.until_cached?.cached_in_round, null);
  assert.equal(run.summary.load.warmup.until_cached?.stopped, 'max_rounds');
  assert.equal(run.summary.warmup_metrics.request_count.avg, 16);
});

test('a server that never carries cached_tokens: unknown, not 0; the rounds stop after the first, said in one line', async () => {
  const player = await startFixturePlayer([
    inlineFixture(
      'no-details',
      {
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: {
          object: 'chat.completion',
          model: 'test-model',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
        },
      },
      { stream: false },
    ),
  ]);
  try {
    const run = await warmUp(player.origin, 'test-model', ['--warmup-until-cached']);
    assert.match(
      run.line,
      /^Warm-up: the server reports no cached_tokens, so --warmup-until-cached cannot tell when its cache is warm: stopped after round 1 of at most 3 \(none of its answers carried usage\.prompt_tokens_details\.cached_tokens: unknown, not 0\)/,
    );
    assert.deepEqual(run.summary.load.warmup.until_cached, {
      max_rounds: 3,
      rounds: 1,
      cached_in_round: null,
      requests: 8,
      reporting_cached_tokens: 0,
      with_cached_tokens: 0,
      stopped: 'no_cached_tokens_reported',
    });
    assert.equal(run.summary.load.warmup.issued, 8, 'no second round sent');
    assert.match(run.stderr, /warmup: the server reports no cached_tokens, .*stopped after round 1/);
  } finally {
    await player.close();
  }
});

test('--warmup-until-cached without a warm-up, and --warmup-max-rounds without it, are refused', async () => {
  for (const [flags, message] of [
    [['--warmup-until-cached'], /--warmup-until-cached repeats a warm-up, but no warm-up was asked for/],
    [
      ['--warmup-request-count', '2', '--warmup-max-rounds', '2'],
      /--warmup-max-rounds requires --warmup-until-cached/,
    ],
  ] as const) {
    const run = await runCliProcess([
      'profile',
      ...['--model', 'm', '--tokenizer', 'builtin', '--url', cached.url, '--request-count', '1', ...flags],
    ]);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, message);
  }
});
