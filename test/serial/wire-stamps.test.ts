/**
 * When each request reached the wire, and on which connection, as a user reads it from
 * `profile_export.jsonl` and the summary JSON: `request_sent_ns` between start and the server's
 * own arrival stamp, `schedule_lag` = `client_lag` + `connection_wait`, pre-opened connections used
 * by the first requests, `connect_time` only for requests that waited for a new connection, and
 * pre-opened connections that the server closes while they wait never failing a request.
 *
 * Serial: a rate run's requests all go out on the connections pre-opened for its first second only
 * while the client keeps its schedule (a late client bunches sends and opens more); the held requests
 * against the impatient server must go out 400 ms apart; the workers' run reads its start-up window.
 * The checks that read stamps' order and counts are in test/integration/wire-stamps-counts.test.ts.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { test } from 'node:test';
import { type Connections, profile, profileSimulator } from '../helpers/wire-run.js';

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
