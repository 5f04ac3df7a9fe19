/**
 * The client's kept-alive connections, through its exported API against servers on 127.0.0.1:
 * - a request on a reused idle connection is on the wire (its `request_sent_ns` stamp) in the turn
 *   that sends it, before the event loop's next check phase (undici alone writes it one
 *   `setImmediate` later);
 * - the protection undici's wait is for still holds: an idle connection on which the server sent
 *   bytes nobody asked for is not used; the request goes out on a new connection and gets its own answer;
 * - a reservation counts the idle connections the pool holds: it opens only what they and the
 *   reserved ones do not cover.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, test } from 'node:test';
import type { SendRequest } from '../../src/client/types.js';
import { createHttpClient } from '../../src/client/undici-client.js';
import { ENDPOINTS } from '../../src/endpoint/registry.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/server.js';
import { monotonicNowNs } from '../../src/timing/clock.js';
import { oneOffIdentity } from '../helpers/send-once.js';

const MODEL = 'm';
let sim: RunningSimulator;

before(async () => {
  sim = await startSimulator({ mode: 'fixed', ttftMs: 1, itlMs: 0, models: [MODEL], warmupMs: 0 });
});
after(async () => {
  await sim?.close();
});

/** A one-message chat request, not streamed. */
function chat(): SendRequest {
  const adapter = ENDPOINTS.chat;
  const body = adapter.buildBody({
    model: MODEL,
    messages: [{ role: 'user', content: 'hello there' }],
    stream: false,
    maxTokens: 4,
    useLegacyMaxTokens: false,
    perChunkUsage: false,
    extraInputs: {},
  });
  return {
    identity: oneOffIdentity(MODEL, 4),
    path: '/v1/chat/completions',
    headers: {},
    body: JSON.stringify(body),
    stream: false,
    adapter,
    timeoutMs: 10_000,
  };
}

/** Resolves after a timer and then a check phase: poll phases have read every byte sent before. */
async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 20));
  await new Promise((resolve) => setImmediate(resolve));
}

test('a request on a reused idle connection is on the wire before the next check phase', async () => {
  const client = createHttpClient({ url: sim.url, connections: 1 });
  try {
    const first = await client.send(chat());
    assert.equal(first.error, null);
    assert.equal(first.connectionReused, false);
    for (let round = 0; round < 3; round++) {
      await settle();
      // Queued before the send: it runs at this turn's check phase, where undici alone would write.
      let checkPhaseNs = Number.POSITIVE_INFINITY;
      setImmediate(() => {
        checkPhaseNs = monotonicNowNs();
      });
      const record = await client.send(chat());
      assert.equal(record.error, null);
      assert.equal(record.connectionReused, true);
      assert.ok(
        record.sentNs !== null && record.sentNs < checkPhaseNs,
        `round ${round}: written after the check phase`,
      );
    }
  } finally {
    await client.close();
  }
});

/** A server that answers every request on its connection, then writes `extra` on it while it is idle. */
function strayBytesServer(): Promise<{
  server: Server;
  url: string;
  sockets: Set<Socket>;
  sent: Promise<void>[];
}> {
  const sockets = new Set<Socket>();
  const sent: Promise<void>[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = JSON.stringify({
        id: `c${sockets.size}`,
        object: 'chat.completion',
        model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
      const socket = req.socket;
      sent.push(
        new Promise((resolve) =>
          setTimeout(
            () => socket.write('HTTP/1.1 500 Stray\r\ncontent-length: 5\r\n\r\nstray', () => resolve()),
            5,
          ),
        ),
      );
    });
  });
  server.on('connection', (socket) => sockets.add(socket));
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({ server, url: `http://127.0.0.1:${port}`, sockets, sent });
    }),
  );
}

test('an idle connection on which the server sent stray bytes is not used', async () => {
  const stray = await strayBytesServer();
  const client = createHttpClient({ url: stray.url, connections: 1 });
  try {
    const first = await client.send(chat());
    assert.equal(first.error, null);
    await stray.sent[0];
    await settle();
    const second = await client.send(chat());
    assert.equal(second.error, null, 'the stray 500 was not taken as its answer');
    assert.equal(second.httpStatus, 200);
    assert.equal(second.connectionReused, false);
    assert.equal(stray.sockets.size, 2);
  } finally {
    await client.close();
    stray.server.closeAllConnections();
    await new Promise((resolve) => stray.server.close(resolve));
  }
});

test('a reservation opens only what the idle pool connections and reserved ones do not cover', async () => {
  let accepted = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = JSON.stringify({
        id: 'c',
        object: 'chat.completion',
        model: MODEL,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  server.on('connection', () => {
    accepted++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = createHttpClient({ url, connections: 4 });
  try {
    // Two requests at once open two connections; both are idle once answered.
    const firsts = await Promise.all([client.send(chat()), client.send(chat())]);
    assert.deepEqual(
      firsts.map((r) => r.error),
      [null, null],
    );
    assert.equal(accepted, 2);
    // Three needed: the two idle ones cover two, one is opened.
    client.reserveConnections?.(3);
    // A request answered after the reservation's connects began: the server has accepted them by then.
    assert.equal((await client.send(chat())).error, null);
    assert.equal(accepted, 3);
    // Three again: two idle in the pool and one reserved cover it; nothing more is opened.
    client.reserveConnections?.(3);
    assert.equal((await client.send(chat())).error, null);
    assert.equal(accepted, 3);
  } finally {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});
