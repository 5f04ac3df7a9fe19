/**
 * The summary's `steady_state` section through the CLI against a fixed-mode simulator: a closed loop
 * found by its in-flight level, a window given as a share of the run, `off`, a refused value, and
 * Little's law holding in the window (the client's own in-flight count against the records'
 * throughput × latency). The server verdict is in test/serial/server-verdict.test.ts. The runs
 * turn the client warm-up off (`--client-warmup-ms 0`: they read windows, counts and verdict
 * reasons). The ramped rate's window, read against the times of its rate series, is in
 * test/serial/steady-state-ramp.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';
const NO_CLIENT_WARMUP = ['--client-warmup-ms', '0'];

interface Steady {
  start_ns: number;
  end_ns: number;
  start_s: number;
  end_s: number;
  method: string;
  fraction_of_run: number;
  requests: number;
  fallback_reason: string | null;
  metrics?: Record<string, { avg: number; p50?: number }>;
  littles_law: { mean_in_flight: number; relative_gap: number; warning: string | null } | null;
}
interface Summary {
  steady_state?: Steady;
  request_throughput: { avg: number };
  request_count: { avg: number };
}

let sim: RunningSimulator;
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, models: [MODEL] });
});
after(async () => {
  await sim?.close();
});

async function profile(flags: string[]): Promise<{ code: number; stderr: string; dir: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-steady-'));
  const exit = await runCliInProcess([
    'profile',
    '--model',
    MODEL,
    '--tokenizer',
    'builtin',
    '--streaming',
    '--osl',
    '8',
    '--isl',
    '32',
    ...flags,
    '--url',
    sim.url,
    '--artifact-dir',
    dir,
    '--ui',
    'none',
    '--no-server-metrics',
    ...NO_CLIENT_WARMUP,
  ]);
  return { ...exit, dir };
}

test('closed loop: the window runs from in-flight reaching the concurrency to its drain, with its own metrics', async () => {
  const run = await profile(['--concurrency', '8', '--request-count', '400']);
  assert.equal(run.code, 0, run.stderr);
  const { summary, records } = readRunArtifacts<Summary>(run.dir);
  const s = summary.steady_state;
  assert.ok(s !== undefined);
  assert.equal(s.method, 'closed_loop_in_flight', JSON.stringify(s));
  assert.equal(s.fallback_reason, null);
  assert.ok(s.start_s >= 0 && s.end_s > s.start_s && s.fraction_of_run > 0.5 && s.fraction_of_run <= 1);
  // The requests it counts are those of the records that started inside it.
  const inside = records.filter((r) => {
    const start = Number(BigInt(r.metadata.request_start_ns as string));
    return start >= s.start_ns - 1000 && start <= s.end_ns + 1000;
  }).length;
  assert.ok(
    Math.abs(inside - s.requests) <= 2,
    `${inside} records started in the window, section says ${s.requests}`,
  );
  assert.ok(s.requests < 400);
  assert.equal(s.metrics?.request_count?.avg, s.requests);
  assert.ok((s.metrics?.request_latency?.p50 ?? 0) > 0);
  // Little's law: 8 in flight on average in a closed loop at 8, and λW agreeing with it.
  assert.ok(s.littles_law !== null);
  assert.ok(
    s.littles_law.mean_in_flight > 7 && s.littles_law.mean_in_flight <= 8,
    JSON.stringify(s.littles_law),
  );
  assert.ok(s.littles_law.relative_gap < 0.1, JSON.stringify(s.littles_law));
  assert.equal(s.littles_law.warning, null);
  const consoleText = readFileSync(join(run.dir, 'profile_export_console.txt'), 'utf8');
  assert.match(consoleText, /Steady state: .* % of the run, .* requests; closed_loop_in_flight\)/);
  assert.match(consoleText, /Server verdict: /);
});

test('--steady-state START:END takes that share of the run; off leaves the section out', async () => {
  const run = await profile(['--concurrency', '4', '--request-count', '120', '--steady-state', '20:80']);
  assert.equal(run.code, 0, run.stderr);
  const s = readRunArtifacts<Summary>(run.dir).summary.steady_state;
  assert.ok(s !== undefined);
  assert.equal(s.method, 'user_range');
  assert.ok(Math.abs(s.fraction_of_run - 0.6) < 0.01, String(s.fraction_of_run));
  assert.ok(Math.abs(s.start_s / (s.end_s / 0.8) - 0.2) < 0.01, `${s.start_s} … ${s.end_s}`);
  const off = await profile(['--concurrency', '4', '--request-count', '20', '--steady-state', 'off']);
  assert.equal(off.code, 0, off.stderr);
  assert.equal(readRunArtifacts<Summary>(off.dir).summary.steady_state, undefined);
});

test('a run too short to find a steady state says so and stands in with the whole run', async () => {
  const run = await profile(['--concurrency', '2', '--request-count', '20']);
  assert.equal(run.code, 0, run.stderr);
  const s = readRunArtifacts<Summary>(run.dir).summary.steady_state;
  assert.equal(s?.method, 'whole_run');
  assert.match(s?.fallback_reason ?? '', /too few requests/);
  assert.equal(s?.fraction_of_run, 1);
  assert.equal(s?.metrics, undefined);
});

test('a bad --steady-state is refused before anything is sent', async () => {
  for (const bad of ['80:20', 'sometimes', '10:101', ' auto', '10 :90', '1e1:90']) {
    const run = await profile(['--concurrency', '2', '--request-count', '4', '--steady-state', bad]);
    assert.equal(run.code, 2, `${bad}: ${run.stderr}`);
    assert.match(run.stderr, /steady-state/);
    assert.match(run.stderr, /START_PCT:END_PCT/);
  }
});

test('a queue behind a --concurrency cap is no steady state; a run with no success gets no server verdict', async () => {
  const slow = await startSimulator({ mode: 'fixed', ttftMs: 50, itlMs: 16, models: [MODEL] });
  const failing = await startSimulator({
    mode: 'fixed',
    ttftMs: 1,
    itlMs: 0,
    models: [MODEL],
    faultRate500: 1,
  });
  try {
    const run = async (url: string, flags: string[]) => {
      const dir = mkdtempSync(join(tmpdir(), 'tokenload-steady-'));
      const args = ['profile', '--model', MODEL, '--tokenizer', 'builtin', '--streaming', '--osl', '4'];
      const exit = await runCliInProcess([
        ...args,
        ...flags,
        '--url',
        url,
        '--artifact-dir',
        dir,
        '--ui',
        'none',
        '--no-server-metrics',
        ...NO_CLIENT_WARMUP,
      ]);
      return {
        ...exit,
        summary: readRunArtifacts<Summary & { server_verdict: { status: string; reason: string } }>(dir)
          .summary,
      };
    };
    // 20/s offered, 1 at a time at ~100 ms each: the schedule's backlog grows on the client all run.
    const capped = await run(slow.url, [
      '--request-rate',
      '20',
      '--arrival-pattern',
      'constant',
      '--concurrency',
      '1',
      '--request-count',
      '60',
    ]);
    assert.equal(capped.code, 0, capped.stderr);
    assert.equal(
      capped.summary.steady_state?.method,
      'whole_run',
      JSON.stringify(capped.summary.steady_state),
    );
    assert.match(
      capped.summary.steady_state?.fallback_reason ?? '',
      /server verdict: overloaded|never settled/,
    );
    const failed = await run(failing.url, ['--request-rate', '40', '--request-count', '40']);
    assert.equal(failed.code, 3, failed.stderr);
    assert.equal(failed.summary.server_verdict.status, 'unknown', failed.summary.server_verdict.reason);
    assert.match(failed.summary.server_verdict.reason, /too few successful requests/);
  } finally {
    await slow.close();
    await failing.close();
  }
});

test('a run without TTFT (not streamed) gets its steady state and verdict from latency alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-steady-'));
  const exit = await runCliInProcess([
    'profile',
    '--model',
    MODEL,
    '--tokenizer',
    'builtin',
    '--osl',
    '4',
    '--request-rate',
    '100',
    '--request-count',
    '120',
    '--url',
    sim.url,
    '--artifact-dir',
    dir,
    '--ui',
    'none',
    '--no-server-metrics',
    ...NO_CLIENT_WARMUP,
  ]);
  assert.equal(exit.code, 0, exit.stderr);
  const { summary } = readRunArtifacts<Summary & { server_verdict: { status: string; reason: string } }>(dir);
  assert.ok(summary.steady_state !== undefined);
  assert.ok(['mser5', 'whole_run'].includes(summary.steady_state.method));
  assert.doesNotMatch(summary.server_verdict.reason, /TTFT/);
});

test('an ok verdict over a server that failed many requests says it read only the answers', async () => {
  const faulty = await startSimulator({
    mode: 'fixed',
    ttftMs: 5,
    itlMs: 1,
    models: [MODEL],
    faultRate500: 0.3,
    seed: 5,
  });
  try {
    const dir = mkdtempSync(join(tmpdir(), 'tokenload-steady-'));
    const exit = await runCliInProcess([
      ...['profile', '--model', MODEL, '--tokenizer', 'builtin', '--streaming', '--osl', '4', '--isl', '32'],
      ...['--request-rate', '50', '--request-count', '80', '--url', faulty.url, '--artifact-dir', dir],
      ...['--ui', 'none', '--no-server-metrics', ...NO_CLIENT_WARMUP],
    ]);
    assert.equal(exit.code, 0, exit.stderr);
    const { summary } = readRunArtifacts<Summary & { server_verdict: { status: string; reason: string } }>(
      dir,
    );
    const v = summary.server_verdict;
    // A busy machine can make the client late, and a late client gets no verdict on the server.
    if (v.status === 'unknown') assert.match(v.reason, /the client was late/);
    else
      assert.match(
        `${v.status}: ${v.reason}`,
        /^ok: .*read from the \d+ answers of 80 requests \(\d+ failed: /,
      );
  } finally {
    await faulty.close();
  }
});
