/**
 * Loopback player for SSE server fixtures (test/fixtures/sse/FORMAT.md §4, §7). One `node:http`
 * server on 127.0.0.1 plays the fixture named by the request's `x-fixture` header (or the only
 * fixture when there is one): writes never go out before their `atMs` (a monotonic clock is
 * re-checked after every timer wake-up), same-`atMs` writes go out as one write, TCP_NODELAY is on,
 * and the response ends with close / destroy (RST) / truncate (FIN without the last chunk) / hang.
 * It logs every request (body summary, flush times) and counts open sockets.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { after, before } from 'node:test';
import type { RawRecord } from '../../src/record/types.js';
import { type SendOnceOptions, sendOnce } from './send-once.js';
import { PROJECT_ROOT } from './test-cache.js';

/** A scripted write: `data` as UTF-8 or `hex` as raw bytes, not before `atMs` after the headers. */
export interface FixtureWrite {
  atMs: number;
  data?: string;
  hex?: string;
  note?: string;
}

/** The `response` of a fixture (FORMAT.md §4). */
export interface FixtureResponse {
  status: number;
  headers: Record<string, string>;
  headersDelayMs?: number;
  writes?: FixtureWrite[];
  end?: 'close' | 'destroy' | 'truncate' | 'hang';
  endAtMs?: number;
  body?: string | Record<string, unknown>;
  delayMs?: number;
}

/** One fixture file (FORMAT.md §2). `expect` is left loose here; the fixture test reads it. */
export interface Fixture {
  formatVersion: 1;
  name: string;
  case: string;
  about: string;
  model: string;
  clientTimeoutMs?: number;
  request: {
    endpoint: 'chat' | 'completions' | 'responses';
    stream: boolean;
    streamOptions?: Record<string, unknown>;
    maxTokens?: number;
    /** 1.2: the client sends a prompt of exactly this many tokens. */
    promptTokens?: number;
  };
  response: FixtureResponse;
  expect: Record<string, unknown>;
}

/** What the player logged for one request. */
export interface PlayedRequest {
  fixture: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: {
    model?: unknown;
    stream?: unknown;
    stream_options?: unknown;
    max_tokens?: unknown;
    max_completion_tokens?: unknown;
    max_output_tokens?: unknown;
  };
  /**
   * How late each scripted action (headers, each merged write, the end action, a whole body) went
   * out against its scripted time counted from the request's arrival, ms: a late header delays every
   * write after it, and the client measures from its own request start.
   */
  lateByMs: number[];
  /** True once the socket that carried this request has closed. */
  socketClosed: boolean;
}

/** A running player. */
export interface FixturePlayer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  /** Every request seen, in arrival order. */
  log: PlayedRequest[];
  /** How many requests named this fixture. */
  attempts(name: string): number;
  /** Currently open server-side sockets (including idle keep-alive ones). */
  openSockets(): number;
  /** The most requests held at once: each from its body's arrival until its response closed. */
  mostHeld(): number;
  /** Destroys every socket and stops the server. */
  close(): Promise<void>;
}

/** Directory holding the handed fixture files (copied from the shared set, kept identical). */
export const FIXTURE_DIR = join(PROJECT_ROOT, 'test', 'fixtures', 'sse');

/** Directory holding tokenload's own fixtures, same format, named `t<NN>-…` (see its README). */
export const OWN_FIXTURE_DIR = join(PROJECT_ROOT, 'test', 'fixtures', 'sse-tokenload');

/** Reads every `*.json` fixture of {@link FIXTURE_DIR}, sorted by name. */
export function loadFixtures(dir: string = FIXTURE_DIR): Fixture[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as Fixture);
}

/** Resolves at or after `targetMs` on the monotonic clock, re-checking after each timer wake-up. */
async function sleepUntilMs(targetMs: number): Promise<void> {
  for (;;) {
    const left = targetMs - performance.now();
    if (left <= 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, Math.ceil(left))));
  }
}

/** Writes grouped by equal `atMs`, each group as one buffer. */
function mergedWrites(writes: readonly FixtureWrite[]): { atMs: number; bytes: Buffer }[] {
  const groups: { atMs: number; parts: Buffer[] }[] = [];
  for (const write of writes) {
    const bytes =
      write.hex !== undefined ? Buffer.from(write.hex, 'hex') : Buffer.from(write.data ?? '', 'utf8');
    const last = groups[groups.length - 1];
    if (last !== undefined && last.atMs === write.atMs) last.parts.push(bytes);
    else groups.push({ atMs: write.atMs, parts: [bytes] });
  }
  return groups.map((group) => ({ atMs: group.atMs, bytes: Buffer.concat(group.parts) }));
}

async function playWhole(fixture: Fixture, res: ServerResponse, receivedMs: number, entry: PlayedRequest) {
  const response = fixture.response;
  const dueMs = receivedMs + (response.delayMs ?? 0);
  await sleepUntilMs(dueMs);
  entry.lateByMs.push(performance.now() - dueMs);
  const body = typeof response.body === 'string' ? response.body : JSON.stringify(response.body ?? '');
  const bytes = Buffer.from(body, 'utf8');
  res.writeHead(response.status, {
    ...response.headers,
    'content-length': String(bytes.length),
    'x-fixture': fixture.name,
  });
  res.end(bytes);
}

async function playStream(fixture: Fixture, res: ServerResponse, receivedMs: number, entry: PlayedRequest) {
  const response = fixture.response;
  const scriptedHeadersMs = receivedMs + (response.headersDelayMs ?? 0);
  await sleepUntilMs(scriptedHeadersMs);
  res.writeHead(response.status, { ...response.headers, 'x-fixture': fixture.name });
  res.flushHeaders();
  const headersAtMs = performance.now();
  entry.lateByMs.push(headersAtMs - scriptedHeadersMs);
  const writes = response.writes ?? [];
  for (const group of mergedWrites(writes)) {
    await sleepUntilMs(headersAtMs + group.atMs);
    entry.lateByMs.push(performance.now() - scriptedHeadersMs - group.atMs);
    res.write(group.bytes);
  }
  const mode = response.end ?? 'close';
  if (mode === 'hang') return;
  const endAtMs = response.endAtMs ?? writes[writes.length - 1]?.atMs ?? 0;
  await sleepUntilMs(headersAtMs + endAtMs);
  entry.lateByMs.push(performance.now() - scriptedHeadersMs - endAtMs);
  const socket = res.socket;
  if (mode === 'close') res.end();
  else if (mode === 'destroy') socket?.resetAndDestroy();
  else socket?.end();
}

function summarize(raw: string): PlayedRequest['body'] {
  try {
    const body = JSON.parse(raw) as Record<string, unknown>;
    const { model, stream, stream_options, max_tokens, max_completion_tokens, max_output_tokens } = body;
    return { model, stream, stream_options, max_tokens, max_completion_tokens, max_output_tokens };
  } catch {
    return {};
  }
}

function pickFixture(fixtures: ReadonlyMap<string, Fixture>, req: IncomingMessage): Fixture | undefined {
  const name = req.headers['x-fixture'];
  if (typeof name === 'string') return fixtures.get(name);
  return fixtures.size === 1 ? fixtures.values().next().value : undefined;
}

/** Starts a player for `fixtures` on a free 127.0.0.1 port. */
export async function startFixturePlayer(fixtures: readonly Fixture[]): Promise<FixturePlayer> {
  const byName = new Map(fixtures.map((fixture) => [fixture.name, fixture]));
  const log: PlayedRequest[] = [];
  const sockets = new Set<Socket>();
  const held = { now: 0, most: 0 };
  // One 'close' listener per socket marks every request it carried (a listener per request piled up
  // on keep-alive sockets: MaxListenersExceededWarning).
  const bySocket = new WeakMap<Socket, PlayedRequest[]>();
  const entriesOf = (socket: Socket): PlayedRequest[] => {
    let entries = bySocket.get(socket);
    if (entries === undefined) {
      const list: PlayedRequest[] = [];
      entries = list;
      bySocket.set(socket, list);
      socket.once('close', () => {
        for (const e of list) e.socketClosed = true;
      });
    }
    return entries;
  };
  const server: Server = createServer({ keepAlive: true }, (req, res) => {
    // A fixture server has no Prometheus metrics (a run scrapes /metrics by default): not a request to log.
    if (req.method === 'GET' && req.url === '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no metrics');
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/models') {
      const data = [...new Set(fixtures.map((fixture) => fixture.model))].map((id) => ({
        id,
        object: 'model',
      }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', data }));
      return;
    }
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const receivedMs = performance.now();
      held.now++;
      held.most = Math.max(held.most, held.now);
      res.once('close', () => held.now--);
      const fixture = pickFixture(byName, req);
      const entry: PlayedRequest = {
        fixture: fixture?.name ?? String(req.headers['x-fixture']),
        path: req.url ?? '',
        headers: req.headers,
        body: summarize(Buffer.concat(parts).toString('utf8')),
        lateByMs: [],
        socketClosed: false,
      };
      entriesOf(req.socket).push(entry);
      log.push(entry);
      if (fixture === undefined) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('unknown fixture');
        return;
      }
      const play =
        fixture.response.body !== undefined
          ? playWhole(fixture, res, receivedMs, entry)
          : playStream(fixture, res, receivedMs, entry);
      play.catch(() => res.destroy());
    });
  });
  server.on('connection', (socket: Socket) => {
    socket.setNoDelay(true);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    log,
    attempts: (name) => log.filter((entry) => entry.fixture === name).length,
    openSockets: () => sockets.size,
    mostHeld: () => held.most,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fixture built in a test: chat streaming by default, no `expect`. */
export function inlineFixture(
  name: string,
  response: FixtureResponse,
  request?: Partial<Fixture['request']>,
): Fixture {
  return {
    formatVersion: 1,
    name,
    case: name,
    about: name,
    model: 'test-model',
    request: { endpoint: 'chat', stream: true, ...request },
    response,
    expect: {},
  };
}

/** `data: <json>\n\n` of a chat chunk carrying `content` (null for a finish-only chunk). */
export function chatChunk(content: string | null, finishReason: string | null = null): string {
  const delta = content === null ? {} : { content };
  const choice = { index: 0, delta, finish_reason: finishReason };
  return `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [choice] })}\n\n`;
}

/** What {@link playFixturesInTests} gives a test file. */
export interface PlayedFixtures {
  /** The running player (valid inside tests). */
  player(): FixturePlayer;
  /** Sends one chat request selecting fixture `name` (streaming by default). */
  send(name: string, over?: Partial<SendOnceOptions>): Promise<RawRecord>;
}

/**
 * Starts a player for `fixtures` before the file's tests and closes it after them; `send` posts one
 * chat request (model `test-model`, one user message) with the `x-fixture` header set.
 */
export function playFixturesInTests(fixtures: readonly Fixture[]): PlayedFixtures {
  let running: FixturePlayer | undefined;
  before(async () => {
    running = await startFixturePlayer(fixtures);
  });
  after(async () => {
    await running?.close();
  });
  const player = (): FixturePlayer => {
    if (running === undefined) throw new Error('fixture player not started (use inside a test)');
    return running;
  };
  return {
    player,
    send: (name, over = {}) =>
      sendOnce({
        url: player().origin,
        endpoint: 'chat',
        model: 'test-model',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
        headers: { 'x-fixture': name },
        ...over,
      }),
  };
}
