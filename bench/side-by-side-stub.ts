/**
 * The stub server of bench/side-by-side.ts, run as a child process: an OpenAI-compatible
 * `POST /v1/chat/completions` that streams `--tokens` tokens, the first `--ttft-ms` after the request
 * body has arrived and each later one `--itl-ms` after the previous one was due, one socket write per
 * token (the last write also carries the usage chunk, `data: [DONE]` and the end of the chunked body).
 * The response headers go out as soon as the body has arrived, as a streaming server sends them.
 *
 * Per request it keeps, keyed by the request's `x-request-id` header, its own stamps taken in its
 * JS handlers: headers received (`request` event), body received (`end` event), headers written, and
 * just before each token write, plus when the request's connection was accepted and how many requests
 * that connection carried before it (0 = the request opened it). Stamps are this process's `performance.now()` mapped to epoch ns with
 * tokenload's own {@link TimeBase}, the formula the client uses for `profile_export.jsonl`.
 * Nothing is written while it serves: on SIGTERM it stops listening, writes the log to `--log` (one
 * JSON line per request, epoch ns as decimal strings) and prints its event-loop delay as one JSON line.
 *
 *   node --import tsx bench/side-by-side-stub.ts --log FILE [--tokens 16] [--ttft-ms 20] [--itl-ms 5]
 *
 * Before it prints `{"port":N}` on stdout (listening on 127.0.0.1, `--port`, default 0 = any free
 * port) it serves itself for `--warmup-ms` (default 1000; see {@link warmUp}). Requests other than a
 * POST (tokenload's preflight `GET /v1/models`) get a model list, are counted and not logged.
 */
import { writeFileSync } from 'node:fs';
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { TimeBase } from '../src/timing/clock.js';
import { arg } from './common.js';

const tokens = Number(arg('tokens', '16'));
const ttftMs = Number(arg('ttft-ms', '20'));
const itlMs = Number(arg('itl-ms', '5'));
const promptTokens = Number(arg('prompt-tokens', '100'));
const logFile = arg('log', '');
const port = Number(arg('port', '0'));
const warmupMs = Number(arg('warmup-ms', '1000'));
const backlog = Number(arg('backlog', '65535'));
/** `x-request-id` prefix of the stub's own warm-up requests, which the log leaves out. */
const WARMUP_ID = 'stub-warmup-';
const MODELS = '{"object":"list","data":[{"id":"m","object":"model","owned_by":"stub"}]}';
let otherRequests = 0;

/** One request's stamps, monotonic ms (`performance.now()`) until the log is written. */
interface Entry {
  id: string | null;
  headersMs: number;
  bodyMs: number;
  headersWriteMs: number;
  tokenWriteMs: number[];
  backpressuredWrites: number;
  closedEarly: boolean;
  /** When the connection carrying the request was accepted, and how many requests it carried before. */
  connectionAcceptedMs: number;
  connectionRequestIndex: number;
}

/** Per accepted connection: when it was accepted and how many requests it has carried. */
const connections = new WeakMap<object, { acceptedMs: number; requests: number }>();
let connectionCount = 0;

const entries: Entry[] = [];

const chunk = (json: string): string => `data: ${json}\n\n`;
const ID_PART = '{"id":"chatcmpl-stub","object":"chat.completion.chunk","created":0,"model":"m","choices":';
/** The SSE event of one token: the first carries the role, the last the finish reason. */
function tokenEvent(first: boolean, last: boolean): string {
  const delta = first ? '{"role":"assistant","content":" the"}' : '{"content":" the"}';
  return chunk(`${ID_PART}[{"index":0,"delta":${delta},"finish_reason":${last ? '"length"' : 'null'}}]}`);
}
const FIRST = tokenEvent(true, false);
const NEXT = tokenEvent(false, false);
const USAGE = chunk(
  `${ID_PART}[],"usage":{"prompt_tokens":${promptTokens},"completion_tokens":${tokens},"total_tokens":${promptTokens + tokens}}}`,
);
const TAIL = `${tokenEvent(tokens === 1, true)}${USAGE}data: [DONE]\n\n`;

/** Writes token `k` (0-based) of `entry` and arms the next one; the last write ends the response. */
function writeToken(res: ServerResponse, entry: Entry, k: number, firstDueMs: number): void {
  if (entry.closedEarly) return;
  entry.tokenWriteMs.push(performance.now());
  if (k === tokens - 1) {
    res.end(TAIL);
    return;
  }
  if (!res.write(k === 0 ? FIRST : NEXT)) entry.backpressuredWrites++;
  const dueMs = firstDueMs + (k + 1) * itlMs;
  setTimeout(writeToken, Math.max(0, dueMs - performance.now()), res, entry, k + 1, firstDueMs);
}

function onRequest(req: IncomingMessage, res: ServerResponse): void {
  if (req.method !== 'POST') {
    otherRequests++;
    res.writeHead(req.url === '/v1/models' ? 200 : 404, { 'content-type': 'application/json' });
    res.end(MODELS);
    return;
  }
  const header = req.headers['x-request-id'];
  const connection = connections.get(req.socket) ?? { acceptedMs: 0, requests: 0 };
  const entry: Entry = {
    id: typeof header === 'string' ? header : null,
    headersMs: performance.now(),
    bodyMs: 0,
    headersWriteMs: 0,
    tokenWriteMs: [],
    backpressuredWrites: 0,
    closedEarly: false,
    connectionAcceptedMs: connection.acceptedMs,
    connectionRequestIndex: connection.requests++,
  };
  entries.push(entry);
  res.on('close', () => {
    if (!res.writableFinished) entry.closedEarly = true;
  });
  req.on('end', () => {
    entry.bodyMs = performance.now();
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    entry.headersWriteMs = performance.now();
    const firstDueMs = entry.bodyMs + ttftMs;
    setTimeout(writeToken, Math.max(0, firstDueMs - performance.now()), res, entry, 0, firstDueMs);
  });
  req.resume();
}

/** The log: one JSON line per request, epoch ns as decimal strings (null when never reached). */
function writeLog(): void {
  const base = new TimeBase();
  const ns = (ms: number): string | null => (ms === 0 ? null : base.toEpochNs(ms * 1e6).toString());
  const lines = entries
    .filter((e) => !e.id?.startsWith(WARMUP_ID))
    .map((e) =>
      JSON.stringify({
        x_request_id: e.id,
        headers_received_ns: ns(e.headersMs),
        body_received_ns: ns(e.bodyMs),
        headers_write_ns: ns(e.headersWriteMs),
        token_write_ns: e.tokenWriteMs.map(ns),
        backpressured_writes: e.backpressuredWrites,
        closed_early: e.closedEarly,
        connection_accepted_ns: ns(e.connectionAcceptedMs),
        connection_request_index: e.connectionRequestIndex,
      }),
    );
  writeFileSync(logFile, lines.length === 0 ? '' : `${lines.join('\n')}\n`);
}

if (logFile === '') throw new Error('side-by-side-stub: --log FILE is required');
if (!Number.isInteger(tokens) || tokens < 1)
  throw new Error('side-by-side-stub: --tokens must be an integer ≥ 1');
const loop = monitorEventLoopDelay({ resolution: 1 });
loop.enable();
/** One warm-up request to this server; resolves when its response has ended. */
function warmupRequest(agent: Agent, listenPort: number, i: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const headers = { 'content-type': 'application/json', 'x-request-id': `${WARMUP_ID}${i}` };
    const req = request({
      host: '127.0.0.1',
      port: listenPort,
      method: 'POST',
      path: '/v1/chat/completions',
      agent,
      headers,
    });
    req.on('response', (res) => res.on('end', resolve).resume());
    req.on('error', reject);
    req.end('{}');
  });
}

/**
 * Serves itself about 1,000 requests/s for `warmupMs` over keep-alive connections, so the run does
 * not meet a cold server (JIT, parser, timers): a real inference server has long been running.
 */
async function warmUp(listenPort: number): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: 128 });
  const pending: Promise<void>[] = [];
  const endMs = performance.now() + warmupMs;
  for (let i = 0; performance.now() < endMs; i++) {
    pending.push(warmupRequest(agent, listenPort, i));
    await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.all(pending);
  agent.destroy();
}

const server = createServer({ keepAliveTimeout: 65_000, noDelay: true }, onRequest);
server.on('connection', (socket) => {
  connections.set(socket, { acceptedMs: performance.now(), requests: 0 });
  connectionCount++;
});
// By default the accept queue is as deep as the kernel allows (net.core.somaxconn): with Node's
// default of 511, a burst of new connections while this loop is busy can overflow it, and the
// kernel's retransmission back-off (1 s, 3 s, 7 s) then lands in the client's figures.
server.listen({ port, host: '127.0.0.1', backlog }, async () => {
  const address = server.address();
  const listenPort = typeof address === 'object' ? (address?.port ?? 0) : 0;
  if (warmupMs > 0) await warmUp(listenPort);
  loop.reset();
  connectionCount = 0;
  process.stdout.write(`${JSON.stringify({ port: listenPort })}\n`);
});
process.on('SIGTERM', () => {
  loop.disable();
  server.close();
  server.closeAllConnections();
  writeLog();
  const ms = (x: number): number => Math.round(x / 1e3) / 1e3;
  const loopDelayMs = { p50: ms(loop.percentile(50)), p99: ms(loop.percentile(99)), max: ms(loop.max) };
  const requests = entries.filter((e) => !e.id?.startsWith(WARMUP_ID)).length;
  process.stdout.write(
    `${JSON.stringify({ requests, otherRequests, connections: connectionCount, loopDelayMs })}\n`,
  );
  process.exit(0);
});
