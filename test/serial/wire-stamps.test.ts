/**
 * When each request reached the wire, and on which connection, as a user reads it from
 * `profile_export.jsonl` and the summary JSON: `request_sent_ns` between start and the server's
 * own arrival stamp, `schedule_lag` = `client_lag` + `connection_wait`, pre-opened connections used
 * by the first requests, `connect_time` only for requests that waited for a new connection, and
 * pre-opened connections that the server closes while they wait never failing a request.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ProfileConfigInput } from '../../src/config/fields.js';
import type { ProfileConfig } from '../../src/config/resolve.js';
import { profileConfig } from '../../src/config/schema.js';
import { runProfile } from '../../src/run/profile.js';
import { startSimulator } from '../../src/simulator/server.js';

interface Line {
  metadata: {
    x_request_id: string;
    request_scheduled_ns: string | null;
    request_start_ns: string;
    request_sent_ns: string | null;
    connection_reused: boolean | null;
    request_ack_ns: string | null;
    request_end_ns: string;
  };
  metrics: Record<string, { value: number }>;
  error: { kind: string; message: string } | null;
}

interface Connections {
  prewarm: { requested: number; opened: number; failed: number; basis: string };
  requests_on_open_connections: number;
  requests_on_new_connections: number;
}

const SILENT = { info: () => undefined, warn: () => undefined };

function config(dir: string, url: string, over: Partial<ProfileConfigInput>): ProfileConfig {
  return profileConfig({
    models: ['sim-model'],
    tokenizer: 'builtin',
    url,
    streaming: true,
    synthetic: { isl: 24, osl: 4, numDatasetEntries: 20 },
    randomSeed: 5,
    requestTimeoutSeconds: 30,
    artifactDir: dir,
    gracePeriodSeconds: 5,
    clientWarmupMs: 0,
    commandLine: 'test',
    ...over,
  });
}

async function profile(
  url: string,
  over: Partial<ProfileConfigInput>,
): Promise<{ lines: Line[]; summary: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-wire-'));
  await runProfile(config(dir, url, over), { log: SILENT, stopSignal: new AbortController().signal });
  const text = readFileSync(join(dir, 'profile_export.jsonl'), 'utf8').trim();
  const lines = text.split('\n').map((l) => JSON.parse(l.replace(/"(\w+_ns)":(\d+)/g, '"$1":"$2"')) as Line);
  const summary = JSON.parse(readFileSync(join(dir, 'profile_export_aiperf.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  return { lines, summary };
}

const ns = (text: string | null): bigint => BigInt(text ?? 'NaN');

/** Runs against the simulator, whose ground-truth log stamps each request's arrival. */
async function profileSimulator(over: Partial<ProfileConfigInput>) {
  const dir = mkdtempSync(join(tmpdir(), 'tokenload-wire-truth-'));
  const truthPath = join(dir, 'truth.jsonl');
  const sim = await startSimulator({ mode: 'fixed', ttftMs: 5, itlMs: 2, groundTruthLog: truthPath });
  try {
    const run = await profile(sim.url, over);
    const arrivals = new Map<string, bigint>();
    for (const l of readFileSync(truthPath, 'utf8').trim().split('\n')) {
      const t = JSON.parse(l) as { x_request_id: string; arrival_ns: string };
      arrivals.set(t.x_request_id, BigInt(t.arrival_ns));
    }
    return { ...run, arrivals };
  } finally {
    await sim.close();
  }
}

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

test('a rate run pre-opens rate × 1 s connections: every request goes out on an open one, no connect_time', async () => {
  const run = await profileSimulator({ requestRate: 50, arrivalPattern: 'constant', requestCount: 60 });
  const c = run.summary.connections as Connections;
  assert.deepEqual([c.prewarm.requested, c.prewarm.opened, c.prewarm.failed], [50, 50, 0]);
  assert.equal(c.requests_on_new_connections, 0);
  assert.equal(c.requests_on_open_connections, 60);
  for (const l of run.lines) {
    assert.equal(l.metadata.connection_reused, true);
    assert.equal(l.metrics.connect_time, undefined);
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

/**
 * A server that closes any connection on which nothing arrived within `idleMs` of accepting it, and
 * answers each chat request with a two-token stream after `holdMs`.
 */
async function impatientServer(
  idleMs: number,
  holdMs: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = (text: string, finish: string | null) =>
          `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: text }, finish_reason: finish }] })}\n\n`;
        res.end(`${chunk('a', null)}${chunk(' b', 'stop')}data: [DONE]\n\n`);
      }, holdMs);
    });
  });
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), idleMs);
    socket.once('data', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('pre-opened connections the server closes while they wait never fail a request', async () => {
  const server = await impatientServer(150, 800);
  try {
    // Sends 0, 400, 800, 1200 ms after the start, each while the ones before are still held: each
    // needs a connection of its own; all but the first find the pre-opened ones closed by the server.
    const run = await profile(server.url, {
      requestRate: 2.5,
      arrivalPattern: 'constant',
      requestCount: 4,
      prewarmConnections: 4,
      endpointType: 'chat',
    });
    assert.equal(run.lines.length, 4);
    for (const l of run.lines) assert.equal(l.error, null, l.error?.message);
    const c = run.summary.connections as Connections;
    assert.equal(c.prewarm.opened, 4);
    assert.ok(
      c.requests_on_new_connections >= 2,
      `only ${c.requests_on_new_connections} opened a connection`,
    );
  } finally {
    await server.close();
  }
});

test('--workers 2: the workers pre-open the connections between them; start_up splits at 2 s of schedule', async () => {
  const run = await profileSimulator({
    requestRate: 20,
    arrivalPattern: 'constant',
    requestCount: 50,
    workers: 2,
  });
  const c = run.summary.connections as Connections;
  assert.deepEqual([c.prewarm.requested, c.prewarm.opened], [20, 20]);
  assert.equal(c.requests_on_open_connections + c.requests_on_new_connections, 50);
  for (const l of run.lines)
    assert.ok(l.metadata.request_sent_ns !== null && l.metadata.connection_reused !== null);
  const startUp = run.summary.start_up as {
    window_s: number;
    first: Record<string, unknown>;
    rest: Record<string, unknown>;
  };
  const pacing = run.summary.pacing as { schedule_reanchors: number };
  assert.equal(startUp.window_s, 2);
  assert.equal((startUp.first.requests as number) + (startUp.rest.requests as number), 50);
  if (pacing.schedule_reanchors === 0) assert.equal(startUp.first.requests, 40);
  for (const part of [startUp.first, startUp.rest])
    for (const key of ['schedule_lag_ms', 'client_lag_ms', 'connection_wait_ms', 'time_to_first_token_ms'])
      assert.ok(part[key] !== undefined, key);
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
