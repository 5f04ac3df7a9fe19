/**
 * Warm-ups before a run: the client exercises its own request path against an in-process simulator
 * (nothing reaches the target), and the simulator serves internal requests on a throwaway instance
 * before it listens (its real cache and counters start empty).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { WARMUP_MIN_GAIN, WARMUP_WINDOW_ROUNDS } from '../../src/run/client-warmup.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

const TRACE = 'examples/traces/bailian_traceA_multiturn_head40.jsonl';

function logger(): { lines: string[]; log: { info: (m: string) => void; warn: (m: string) => void } } {
  const lines: string[] = [];
  return { lines, log: { info: (m) => lines.push(m), warn: (m) => lines.push(m) } };
}

/** Requests the warm-up line reports, or null when there is no such line. */
function warmupRequests(lines: string[]): { requests: number; failed: number } | null {
  for (const line of lines) {
    const m = /^client warm-up: (\d+) requests \((\d+) failed\)/.exec(line);
    if (m) return { requests: Number(m[1]), failed: Number(m[2]) };
  }
  return null;
}

/** Runs a profile against `url` with `over`; returns the log lines and the outcome. */
async function profileAgainst(url: string, over: Partial<ProfileConfig>) {
  const { lines, log } = logger();
  const config = profileConfig({
    models: ['m'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    randomSeed: 3,
    artifactDir: mkdtempSync(join(tmpdir(), 'tokenload-warm-')),
    ...over,
  });
  const outcome = await runProfile(config, { log, stopSignal: new AbortController().signal });
  return { lines, outcome, dir: config.artifactDir };
}

test('client warm-up: requests go to an in-process simulator, never to the target', async () => {
  const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 }, { captureRequests: true });
  try {
    const { lines, outcome, dir } = await profileAgainst(target.url, {
      concurrency: 2,
      requestCount: 6,
      synthetic: { isl: 64, osl: 8 },
      clientWarmupMs: 300,
    });
    const warm = warmupRequests(lines);
    assert.ok(warm !== null, `a warm-up line in ${JSON.stringify(lines)}`);
    assert.ok(warm.requests > 0);
    assert.equal(warm.failed, 0);
    assert.equal(outcome.recordCount, 6);
    assert.equal(target.capturedRequests().length, 6, 'the target saw only the measured requests');
    assert.equal(readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim().split('\n').length, 6);
  } finally {
    await target.close();
  }
});

test('client warm-up of a streamed trace replay uses its first row with warm-up-only hash ids', async () => {
  const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 }, { captureRequests: true });
  try {
    const { lines } = await profileAgainst(target.url, {
      inputFile: TRACE,
      customDatasetType: 'bailian_trace',
      fixedSchedule: true,
      synthesisSpeedupRatio: 50,
      clientWarmupMs: 200,
    });
    const warm = warmupRequests(lines);
    assert.ok(warm !== null && warm.requests > 0 && warm.failed === 0, JSON.stringify(lines));
    assert.equal(target.capturedRequests().length, 40, 'the 40 trace rows, and nothing else');
  } finally {
    await target.close();
  }
});

test('client warm-up stops once its CPU per request stops falling, and leaves no files behind', async () => {
  const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 });
  const scratch = mkdtempSync(join(tmpdir(), 'tokenload-warm-tmp-'));
  const tmpBefore = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  try {
    const { lines } = await profileAgainst(target.url, {
      requestCount: 2,
      synthetic: { isl: 32, osl: 4 },
      clientWarmupMs: 60_000,
    });
    const line = lines.find((l) => l.startsWith('client warm-up:')) ?? '';
    const m =
      /CPU per request ([\d.]+) → ([\d.]+) ms over (\d+) rounds of at least (\d+) requests \(last two windows of \d+ rounds: ([\d.]+) → ([\d.]+) ms\); ended because (.*); nothing/.exec(
        line,
      );
    assert.ok(m !== null, line);
    assert.ok(Number(m[3]) >= 2 * WARMUP_WINDOW_ROUNDS, `two windows of rounds at least: ${line}`);
    assert.equal(m[7], 'it stopped falling', line);
    assert.ok(
      !lines.some((l) => l.startsWith('stopping:')),
      `no stop message of the warm-up's phase: ${lines.join(' | ')}`,
    );
    assert.ok(Number(m[2]) < Number(m[1]), `CPU per request fell: ${line}`);
    // Stopped because the latest window was less than WARMUP_MIN_GAIN cheaper than the one before it.
    assert.ok(Number(m[6]) > (1 - WARMUP_MIN_GAIN) * Number(m[5]) - 0.001, `levelled off: ${line}`);
    const left = readdirSync(scratch).filter((name) => name.startsWith('tokenload-client-warmup-'));
    assert.deepEqual(left, [], 'the warm-up removed the folder its records went to');
  } finally {
    if (tmpBefore === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = tmpBefore;
    await target.close();
  }
});

test('client warm-up of a light run ends once its rate needs a small share of a core', async () => {
  const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 });
  try {
    const { lines } = await profileAgainst(target.url, {
      requestRate: 20,
      requestCount: 2,
      synthetic: { isl: 32, osl: 4 },
      clientWarmupMs: 60_000,
    });
    const line = lines.find((l) => l.startsWith('client warm-up:')) ?? '';
    const m = / over (\d+) rounds of at least \d+ requests.*; ended because (.*); nothing/.exec(line);
    assert.ok(m !== null, line);
    assert.equal(m[2], "the run's rate keeps the client under 10 % of a core at that cost", line);
    assert.ok(Number(m[1]) < 2 * WARMUP_WINDOW_ROUNDS, `before the windows could compare: ${line}`);
  } finally {
    await target.close();
  }
});

test('--client-warmup-ms 0 turns the client warm-up off', async () => {
  const target = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0 });
  try {
    const { lines } = await profileAgainst(target.url, {
      requestCount: 2,
      synthetic: { isl: 32, osl: 4 },
      clientWarmupMs: 0,
    });
    assert.equal(warmupRequests(lines), null);
  } finally {
    await target.close();
  }
});

test('simulator warm-up leaves the real instance with empty counters and an empty cache', async () => {
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 0, itlMs: 0, warmupMs: 200 });
  try {
    const before = sim.stats();
    assert.equal(before.requests, 0);
    assert.equal(before.promptTokens, 0);
    assert.equal(before.cache.queryTokens, 0);
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        max_tokens: 3,
        messages: [{ role: 'user', content: 'hello there' }],
      }),
    });
    assert.equal(res.status, 200);
    await res.json();
    assert.equal(sim.stats().requests, 1);
  } finally {
    await sim.close();
  }
});
