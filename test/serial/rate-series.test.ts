/**
 * `--request-rate-series` through the built CLI against the fixed-mode simulator: the series
 * 10/s at 0 s → 40/s at 3 s → 40/s at 5 s, constant arrivals, no count or duration (the run ends at
 * the last point). Each second's sends are compared with the series' integral over that second
 * (15, 25, 35, 40, 40 requests: the rate is 10 + 10·t up to 3 s), both as scheduled and as sent;
 * the summary records the series in its load description and in `input_config`.
 *
 * Serial: the sends are bucketed by `request_start_ns`, so each must leave within a bucket's
 * tolerance of its scheduled time; a client stalled by other tests would move sends across the
 * seconds' edges.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { runCliProcess } from '../helpers/cli-process.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

interface Summary {
  load: { description: string };
  input_config: { loadgen: Record<string, unknown> };
}

let sim: RunningSimulator;
const dirs: string[] = [];
before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 1, tokenizer: 'builtin' });
});
after(async () => {
  await sim.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Counts of `ns` (epoch ns as strings) in each whole second after `zeroNs`. */
function perSecond(ns: readonly string[], zeroNs: bigint, seconds: number): number[] {
  const counts = Array.from({ length: seconds }, () => 0);
  for (const t of ns) {
    const s = Number((BigInt(t) - zeroNs) / 1_000_000_000n);
    if (s >= 0 && s < seconds) counts[s] = (counts[s] as number) + 1;
  }
  return counts;
}

test('a rate series sends, second by second, the integral of its rate (scheduled and sent); the run ends at its last point', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-series-'));
  dirs.push(dir);
  const points = [
    { time_s: 0, qps: 10 },
    { time_s: 3, qps: 40 },
    { time_s: 5, qps: 40 },
  ];
  const file = join(dir, 'series.json');
  writeFileSync(file, JSON.stringify({ points }));
  const out = join(dir, 'out');
  const r = await runCliProcess([
    'profile',
    '-m',
    'm',
    '--tokenizer',
    'builtin',
    '--url',
    sim.url,
    '--request-rate-series',
    file,
    '--arrival-pattern',
    'constant',
    '--synthetic-input-tokens-mean',
    '16',
    '--output-tokens-mean',
    '4',
    '--ui',
    'none',
    '--no-server-metrics',
    '--artifact-dir',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const { records, summary } = readRunArtifacts<Summary>(out);
  const scheduled = records.map((x) => x.metadata.request_scheduled_ns as string);
  const started = records.map((x) => x.metadata.request_start_ns as string);
  const [zero = 0n] = scheduled.map(BigInt).sort((a, b) => Number(a - b));
  const expected = [15, 25, 35, 40, 40];
  for (const [what, counts] of [
    ['scheduled', perSecond(scheduled, zero, 5)],
    ['sent', perSecond(started, zero, 5)],
  ] as const) {
    counts.forEach((n, s) => {
      assert.ok(
        Math.abs(n - (expected[s] as number)) <= 1,
        `${what}: second ${s}: ${n}, series ${expected[s]}`,
      );
    });
  }
  assert.ok(Math.abs(records.length - 155) <= 1, `${records.length} requests, series integral 155`);
  assert.equal(
    summary.load.description,
    `request rate series ${file}: 0 s 10/s → 3 s 40/s → 5 s 40/s, then held (constant)`,
  );
  assert.deepEqual(summary.input_config.loadgen.request_rate_series, { file, points });
});
