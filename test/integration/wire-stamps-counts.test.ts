/**
 * When each request reached the wire, and on which connection, as a user reads it from
 * `profile_export.jsonl` and the summary JSON: `request_sent_ns` between start and the server's
 * own arrival stamp, `schedule_lag` = `client_lag` + `connection_wait`, `connect_time` only for
 * requests that opened a connection, and how many connections a run pre-opens (a fixed schedule's
 * busiest second, a streamed trace's fixed 64, `auto`, a number cut to one per request). These read
 * the stamps' order and counts, which hold on a busy machine too; what needs the client on time is
 * in test/serial/wire-stamps.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type Connections, ns, profileSimulator } from '../helpers/wire-run.js';

test('request_sent_ns lies between the start and the server’s arrival; schedule_lag = client_lag + connection_wait', async () => {
  const run = await profileSimulator({ requestRate: 50, arrivalPattern: 'constant', requestCount: 30 });
  assert.equal(run.lines.length, 30);
  for (const { metadata: m, metrics, error } of run.lines) {
    assert.equal(error, null);
    const sent = ns(m.request_sent_ns);
    assert.ok(ns(m.request_start_ns) <= sent, 'sent before it started');
    const arrival = run.arrivals.get(m.x_request_id);
    assert.ok(arrival !== undefined && sent <= arrival, 'the server saw it before it was sent');
    assert.ok(sent <= ns(m.request_ack_ns));
    const lag = metrics.schedule_lag?.value ?? Number.NaN;
    const parts = (metrics.client_lag?.value ?? Number.NaN) + (metrics.connection_wait?.value ?? Number.NaN);
    assert.ok(Math.abs(lag - parts) <= 2.5e-6, `schedule_lag ${lag} vs parts ${parts}`);
    // The metric from monotonic ns, the span from the exported integers: equal within 1 ns.
    const span = Number(sent - ns(m.request_scheduled_ns)) / 1e6;
    assert.ok(Math.abs(lag - span) < 1e-5, `schedule_lag ${lag} vs sent − scheduled ${span}`);
  }
});

test('--prewarm-connections 0: requests that opened a connection carry connect_time, and are counted', async () => {
  const run = await profileSimulator({ concurrency: 4, requestCount: 12, prewarmConnections: 0 });
  const c = run.summary.connections as Connections;
  assert.equal(c.prewarm.requested, 0);
  const fresh = run.lines.filter((l) => l.metadata.connection_reused === false);
  assert.ok(fresh.length >= 1 && fresh.length <= 4, `${fresh.length} requests opened a connection`);
  assert.equal(c.requests_on_new_connections, fresh.length);
  assert.equal(c.requests_on_open_connections, 12 - fresh.length);
  for (const l of run.lines) {
    const connect = l.metrics.connect_time?.value;
    if (l.metadata.connection_reused) assert.equal(connect, undefined);
    else assert.ok(connect !== undefined && connect <= (l.metrics.connection_wait?.value ?? 0));
  }
});

/** A Bailian trace: `burst` rows at 0 s, then `after` rows one per second from 20 s. */
function burstTrace(burst: number, after: number): string {
  const rows: string[] = [];
  const row = (id: number, timestamp: number) =>
    JSON.stringify({
      chat_id: id,
      parent_chat_id: -1,
      timestamp,
      input_length: 16,
      output_length: 2,
      type: 'text',
      turn: 1,
      hash_ids: [id],
    });
  for (let i = 0; i < burst; i++) rows.push(row(i + 1, 0));
  for (let i = 0; i < after; i++) rows.push(row(burst + i + 1, 20 + i));
  const file = join(mkdtempSync(join(tmpdir(), 'tokenload-wire-trace-')), 'trace.jsonl');
  writeFileSync(file, `${rows.join('\n')}\n`);
  return file;
}

test('a fixed schedule loaded whole pre-opens its busiest second; a streamed one a fixed 64', async () => {
  const file = burstTrace(7, 3);
  const trace = { inputFile: file, customDatasetType: 'bailian_trace' as const, synthesisSpeedupRatio: 20 };
  const whole = await profileSimulator({ ...trace, traceStreaming: false, synthetic: undefined });
  const c = whole.summary.connections as Connections;
  assert.equal(c.prewarm.requested, 7);
  assert.match(c.prewarm.basis, /busiest second/);
  assert.equal(whole.lines.length, 10);
  const streamed = await profileSimulator({ ...trace, traceStreaming: true, synthetic: undefined });
  assert.equal((streamed.summary.connections as Connections).prewarm.requested, 64);
});

test('--prewarm-connections auto is accepted; a number above the run’s requests is cut to one per request', async () => {
  const auto = await profileSimulator({ requestRate: 50, requestCount: 10, prewarmConnections: 'auto' });
  const a = auto.summary.connections as Connections;
  assert.equal(a.prewarm.requested, 10);
  assert.match(a.prewarm.basis, /--request-rate × 1 s, at most one per request/);
  const big = await profileSimulator({ concurrency: 2, requestCount: 6, prewarmConnections: 100000 });
  const b = big.summary.connections as Connections;
  assert.deepEqual([b.prewarm.requested, b.prewarm.failed], [2, 0]);
  const startUp = big.summary.start_up as { first: { requests: number }; rest: unknown };
  assert.deepEqual([startUp.first.requests, startUp.rest], [6, null]);
});
