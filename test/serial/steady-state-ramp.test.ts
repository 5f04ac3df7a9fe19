/**
 * The steady-state window of an open-loop run through the CLI: a rate ramped up for 3 s and then held
 * at 60/s against a fixed-mode simulator has its MSER-5 window from about the ramp's end, at the held
 * rate, while the whole run's rate is diluted by the ramp. Serial: the window is read against the
 * rate series' times, so a client late by a busy machine (the parallel group) moves it. The client
 * warm-up stays on: the window is timed from the run's own start.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startSimulator } from '../../src/simulator/server.js';
import { runCliInProcess } from '../helpers/cli-in-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const MODEL = 'Qwen/Qwen3-0.6B';

interface Summary {
  steady_state: {
    method: string;
    start_s: number;
    metrics?: Record<string, { avg: number }>;
  };
  request_throughput: { avg: number };
}

test('open loop: a rate ramped up for 3 s then held at 60/s has its steady window from about 3 s, at the held rate', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-steady-'));
  const series = join(dir, 'series.json');
  writeFileSync(series, '{"points":[{"time_s":0,"qps":4},{"time_s":3,"qps":60},{"time_s":10,"qps":60}]}');
  const slow = await startSimulator({ mode: 'fixed', ttftMs: 50, itlMs: 12, models: [MODEL] });
  try {
    const flags = ['--osl', '5', '--request-rate-series', series, '--arrival-pattern', 'constant'];
    const exit = await runCliInProcess([
      'profile',
      '--model',
      MODEL,
      '--tokenizer',
      'builtin',
      '--streaming',
      ...flags,
      '--url',
      slow.url,
      '--artifact-dir',
      join(dir, 'run'),
      '--ui',
      'none',
      '--no-server-metrics',
    ]);
    assert.equal(exit.code, 0, exit.stderr);
    const { summary } = readRunArtifacts<Summary>(join(dir, 'run'));
    const s = summary.steady_state;
    assert.equal(s?.method, 'mser5', JSON.stringify(s));
    // Not before the ramp ends; a batch or two of MSER-5 later at most.
    assert.ok(s.start_s >= 2 && s.start_s <= 5.5, `window from ${s.start_s} s; the ramp ends at 3 s`);
    // Inside the window the rate is the held 60/s; the whole run's is diluted by the ramp.
    const steadyRate = s.metrics?.request_throughput?.avg ?? 0;
    assert.ok(Math.abs(steadyRate - 60) < 6, `steady ${steadyRate} req/s`);
    assert.ok(
      summary.request_throughput.avg < 0.95 * steadyRate,
      `whole run ${summary.request_throughput.avg} req/s`,
    );
  } finally {
    await slow.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
