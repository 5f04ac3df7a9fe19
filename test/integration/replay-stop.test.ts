/**
 * A trace replayed on its schedule honours the stop conditions a user gives (AIPerf's fixed schedule
 * checks `--benchmark-duration` and the request count too): nothing is sent after the duration, and
 * exactly `--request-count` requests are sent, the first by schedule. Found by a new user: the replay
 * went on past the duration and the cut-off then cancelled what it had sent late.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { runProfile } from '../../src/run/profile.js';
import { simulatorReplayConfig } from '../helpers/replay-config.js';
import { readRunArtifacts } from '../helpers/run-artifacts.js';

const TRACE = 'examples/traces/bailian_traceA_stratified_head24.jsonl';
const SILENT = { info: () => undefined, warn: () => undefined };

interface Summary {
  request_count?: { avg: number };
  duration_cutoff?: { in_flight_at_cutoff: number; cancelled_after_grace: number };
}

const ns = (v: unknown): bigint => BigInt(v as string);

test('--benchmark-duration on a fixed schedule: no request sent after it, none cancelled with time to finish', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-replay-stop-'));
  // The 24 rows span 30 s of trace; at 5x the schedule lasts 6 s, the duration stops it after 1 s.
  const config = simulatorReplayConfig(dir, TRACE, 5, {
    benchmarkDurationSeconds: 1,
    gracePeriodSeconds: 10,
  });
  await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  const { records, summary } = readRunArtifacts<Summary>(dir);
  assert.ok(records.length > 0 && records.length < 24, `${records.length} of 24 rows sent`);
  // A request is sent only when its time has come and the duration has not passed: every one sent
  // was scheduled within the first second of the schedule (its first row's time).
  const scheduled = records.map((r) => ns(r.metadata.request_scheduled_ns));
  const zero = [...scheduled].sort((a, b) => (a < b ? -1 : 1))[0] as bigint;
  for (const t of scheduled) assert.ok(t - zero < 1_000_000_000n, `scheduled ${t - zero} ns after the start`);
  for (const r of records) assert.equal(r.error, null, JSON.stringify(r.error));
  assert.equal(summary.duration_cutoff?.cancelled_after_grace, 0);
});

test('--request-count on a fixed schedule: exactly that many requests, the first by schedule', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-replay-count-'));
  const config = simulatorReplayConfig(dir, TRACE, 20, { requestCount: 5 });
  await runProfile(config, { log: SILENT, stopSignal: new AbortController().signal });
  const { records, summary } = readRunArtifacts<Summary>(dir);
  assert.equal(records.length, 5);
  assert.equal(summary.request_count?.avg, 5);
  const rows = readFileSync(TRACE, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { chat_id: number; timestamp: number });
  const earliest = rows
    .sort((a, b) => a.timestamp - b.timestamp)
    .slice(0, 5)
    .map((r) => String(r.chat_id));
  const sent = records.map((r) => String(r.metadata.conversation_id));
  assert.deepEqual([...sent].sort(), [...earliest].sort());
});
