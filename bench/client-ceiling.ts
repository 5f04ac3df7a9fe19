/**
 * Client ceiling: requests/s, SSE events/s and client CPU per request and per content chunk that
 * tokenload's client sustains against a minimal loopback server, side by side with autocannon
 * against the same server in the same run, and with the floors below it (`--clients`).
 *
 * The server (this file run with `--serve`, in a child process) answers every request with the same
 * bytes: `--events N` events (N − 2 `chat.completion.chunk` content events, a finish chunk with usage,
 * and `[DONE]`). By default it streams like an inference server: the first event `--ttft-ms` (20)
 * after the request, then one event every `--itl-ms` (5), each in its own socket write (the usage
 * chunk and `[DONE]` leave with the last content event), so the client reads each chunk separately.
 * `--one-write` sends the whole body in one write at once (the old mode); `--writes K` (with
 * `--one-write`) splits it into K writes one event-loop turn apart.
 * Every client sends the same request: a POST of the same JSON body with the same headers, closed
 * loop, C requests in flight. `--clients` lists which clients run, in order:
 * - `tokenload`: the product's client (createClient; `--workers` as listed), stream decoded, every
 *   event parsed and stamped into a record;
 * - `undici`: an undici Pool with the same options driven by a handler that only counts reads (the
 *   floor of any undici-based client: socket read, llhttp, undici's request bookkeeping);
 * - `net`: one plain `net.Socket` per connection with a `data` listener that counts bytes up to the
 *   response's end (the floor of any Node client: the socket read path alone);
 * - autocannon 8 (unless `--autocannon no`), after each tokenload row.
 *
 *   npm run bench:client -- --connections 128 --seconds 5 --workers 1 --clients tokenload,undici,net
 *   npm run bench:client -- --connections 64 --seconds 5 --workers 1,2 --one-write
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { connect, type Socket } from 'node:net';
import { type Dispatcher, Pool } from 'undici';
import type { HttpClient, SendRequest } from '../src/client/types.js';
import { requestHeaders } from '../src/client/undici-client.js';
import { createClient } from '../src/client/worker-factory.js';
import { threadCpuSeconds } from '../src/client/worker-protocol.js';
import { ENDPOINTS } from '../src/endpoint/registry.js';
import { packageVersion } from '../src/util/package-root.js';
import { oneOffIdentity } from '../test/helpers/send-once.js';
import {
  arg,
  describeTiming,
  machine,
  procCpuSeconds,
  r3,
  type StreamTiming,
  streamTiming,
} from './common.js';

const PATH = '/v1/chat/completions';
const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
/** Headers of a tokenload request (undici-client `requestHeaders` with one caller header). */
const HEADERS: Record<string, string> = {
  accept: 'text/event-stream',
  'user-agent': `tokenload/${packageVersion()}`,
  'x-request-id': '00000000-0000-0000-0000-000000000000',
  'content-type': 'application/json',
};

/** The part of autocannon's programmatic API used here (it ships no types). */
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  method: string;
  headers: Record<string, string>;
  body: string;
}) => Promise<{ requests: { average: number }; errors: number; non2xx: number }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

/** The response's events: N − 2 content events, a finish chunk with usage, `[DONE]`; `events` ≥ 3. */
function streamEvents(events: number): string[] {
  const chunk = (delta: object, finish: string | null, usage?: object) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const content = events - 2;
  const all: string[] = [];
  for (let i = 0; i < content; i++)
    all.push(chunk(i === 0 ? { role: 'assistant', content: ' tok' } : { content: ' tok' }, null));
  all.push(chunk({}, 'stop', { prompt_tokens: 10, completion_tokens: content, total_tokens: 10 + content }));
  all.push('data: [DONE]\n\n');
  return all;
}

/**
 * The response body as the server writes it: one buffer per content event (the last one carrying
 * the usage chunk and `[DONE]` too) when streaming, else `writes` buffers split on event boundaries.
 */
function bodyWrites(events: number, timing: StreamTiming, writes: number): Buffer[] {
  const all = streamEvents(events);
  if (!timing.oneWrite) {
    const out = all.slice(0, -3).map((e) => Buffer.from(e));
    out.push(Buffer.from(all.slice(-3).join('')));
    return out;
  }
  const parts = Math.min(writes, all.length);
  const out: Buffer[] = [];
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((p * all.length) / parts);
    const to = Math.floor(((p + 1) * all.length) / parts);
    out.push(Buffer.from(all.slice(from, to).join('')));
  }
  return out;
}

/** Writes `parts[i…]`: the next one after `gapMs` (a timer), or one event-loop turn later when 0. */
function writeBody(res: ServerResponse, parts: Buffer[], i: number, gapMs: number): void {
  const part = parts[i] as Buffer;
  if (i === parts.length - 1) res.end(part);
  else {
    res.write(part);
    if (gapMs > 0) setTimeout(writeBody, gapMs, res, parts, i + 1, gapMs);
    else setImmediate(writeBody, res, parts, i + 1, gapMs);
  }
}

function serve(events: number, timing: StreamTiming, writes: number): void {
  const parts = bodyWrites(events, timing, writes);
  const length = parts.reduce((n, b) => n + b.length, 0);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': length });
      if (timing.ttftMs > 0) {
        res.flushHeaders();
        setTimeout(writeBody, timing.ttftMs, res, parts, 0, timing.itlMs);
      } else writeBody(res, parts, 0, timing.itlMs);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') process.send?.({ port: address.port });
  });
  process.on('message', () => server.close(() => process.exit(0)));
}

function startServer(): Promise<{ child: ChildProcess; url: string }> {
  const args = ['--serve', ...process.argv.slice(2)];
  const child = fork(new URL(import.meta.url).pathname, args, { execArgv: ['--import', 'tsx'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve({ child, url: `http://127.0.0.1:${m.port}` }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

const IDENTITY = oneOffIdentity('m', 20);

/** Request `i`: the same body, its own conversation id and X-Request-ID (a counter, not a random UUID). */
function requestOf(i: number): SendRequest {
  const requestId = `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
  return {
    identity: { ...IDENTITY, conversationId: `c${i}`, xRequestId: requestId },
    path: PATH,
    headers: { 'x-request-id': requestId },
    body: BODY,
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs: 30_000,
  };
}

const mainThreadCpuSeconds = (): number => threadCpuSeconds((path) => readFileSync(path, 'utf8')) ?? 0;

/** What one closed-loop run of a client counted. */
interface LoopResult {
  requests: number;
  /** Content events received (the floors count the events the body holds). */
  chunks: number;
  /** Body reads (socket reads for `net`). */
  reads: number;
  errors: number;
  s: number;
}

/** Process, main-thread and server CPU over `work`, per request (ms) and per content chunk (µs). */
async function withCpu<T extends { requests: number; chunks?: number }>(
  serverPid: number,
  work: () => Promise<T>,
) {
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuSeconds();
  const server0 = procCpuSeconds(serverPid);
  const result = await work();
  const cpu = process.cpuUsage(cpu0);
  const mainS = mainThreadCpuSeconds() - main0;
  const serverS = procCpuSeconds(serverPid) - server0;
  const n = Math.max(1, result.requests);
  const processMs = (cpu.user + cpu.system) / 1000;
  return {
    result,
    processCpuMsPerRequest: r3(processMs / n),
    ...(result.chunks === undefined
      ? {}
      : { processCpuUsPerChunk: r3((processMs * 1000) / Math.max(1, result.chunks)) }),
    mainThreadCpuMsPerRequest: r3((mainS * 1000) / n),
    serverCpuMsPerRequest: r3((serverS * 1000) / n),
  };
}

/** Runs `one(i)` in `connections` parallel loops for `seconds`; sums what each call returns. */
async function closedLoop(
  connections: number,
  seconds: number,
  one: (i: number) => Promise<{ chunks: number; reads: number; error: boolean }>,
): Promise<LoopResult> {
  const endMs = performance.now() + seconds * 1000;
  const out: LoopResult = { requests: 0, chunks: 0, reads: 0, errors: 0, s: 0 };
  let i = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < endMs) {
        const r = await one(i++);
        out.requests++;
        out.chunks += r.chunks;
        out.reads += r.reads;
        if (r.error) out.errors++;
      }
    }),
  );
  out.s = (performance.now() - t0) / 1000;
  return out;
}

/** Distinct arrival stamps of a record's chunks: the reads that carried content. */
function readsOf(chunks: ReadonlyArray<{ atNs: number }>): number {
  let reads = 0;
  let last = -1;
  for (const c of chunks) {
    if (c.atNs !== last) reads++;
    last = c.atNs;
  }
  return reads;
}

async function tokenload(url: string, connections: number, seconds: number, workers: number) {
  const client = createClient({ url, connections, workers }) as HttpClient & { ready?(): Promise<void> };
  await client.ready?.();
  const one = async (i: number) => {
    const raw = await client.send(requestOf(i));
    return { chunks: raw.chunks.length, reads: readsOf(raw.chunks), error: raw.error !== null };
  };
  await closedLoop(connections, 1, one); // warm-up: JIT, connections
  const run = await measure(() => closedLoop(connections, seconds, one));
  await client.close();
  return { client: 'tokenload', workers, ...run };
}

/** A dispatch handler that only counts body reads (the floor of an undici-based client). */
class CountingHandler implements Dispatcher.DispatchHandler {
  reads = 0;
  status = 0;
  constructor(private readonly done: (h: CountingHandler, error: boolean) => void) {}
  onConnect(): void {}
  onHeaders(statusCode: number): boolean {
    this.status = statusCode;
    return true;
  }
  onData(): boolean {
    this.reads++;
    return true;
  }
  onComplete(): void {
    this.done(this, this.status !== 200);
  }
  onError(): void {
    this.done(this, true);
  }
}

async function undiciFloor(url: string, connections: number, seconds: number, events: number) {
  const pool = new Pool(new URL(url).origin, {
    connections,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const one = (i: number) =>
    new Promise<{ chunks: number; reads: number; error: boolean }>((resolve) => {
      const request = requestOf(i);
      const headers = requestHeaders(request, HEADERS['user-agent'] as string);
      const handler = new CountingHandler((h, error) =>
        resolve({ chunks: events - 2, reads: h.reads, error }),
      );
      pool.dispatch({ path: PATH, method: 'POST', headers, body: BODY }, handler);
    });
  await closedLoop(connections, 1, one);
  const run = await measure(() => closedLoop(connections, seconds, one));
  await pool.destroy();
  return { client: 'undici', ...run };
}

/**
 * One keep-alive socket that sends the request and counts the response's bytes (header block, then
 * `content-length` body bytes) with a `data` listener: the floor of any Node client.
 */
class NetConnection {
  private readonly socket: Socket;
  private need = -1;
  private head = '';
  private reads = 0;
  private resolve: ((r: { chunks: number; reads: number; error: boolean }) => void) | null = null;

  constructor(
    port: number,
    private readonly events: number,
  ) {
    this.socket = connect(port, '127.0.0.1');
    this.socket.setNoDelay(true);
    this.socket.on('data', (b: Buffer) => this.onData(b));
  }

  send(i: number): Promise<{ chunks: number; reads: number; error: boolean }> {
    const request = requestOf(i);
    const headers = requestHeaders(request, HEADERS['user-agent'] as string);
    let text = `POST ${PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n`;
    for (const name in headers) text += `${name}: ${headers[name]}\r\n`;
    this.socket.write(`${text}\r\n${BODY}`);
    this.need = -1;
    this.head = '';
    this.reads = 0;
    return new Promise((resolve) => {
      this.resolve = resolve;
    });
  }

  private onData(b: Buffer): void {
    this.reads++;
    let body = b.length;
    if (this.need < 0) {
      this.head += b.toString('latin1');
      const end = this.head.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length: *(\d+)/i.exec(this.head.slice(0, end));
      this.need = Number(length?.[1] ?? 0);
      body = this.head.length - end - 4;
    }
    this.need -= body;
    if (this.need <= 0) this.resolve?.({ chunks: this.events - 2, reads: this.reads, error: false });
  }

  close(): void {
    this.socket.destroy();
  }
}

async function netFloor(url: string, connections: number, seconds: number, events: number) {
  const port = Number(new URL(url).port);
  const sockets = Array.from({ length: connections }, () => new NetConnection(port, events));
  // One loop per connection: a loop always finds a connection idle.
  const idle: NetConnection[] = [...sockets];
  const one = async (i: number) => {
    const c = idle.pop() as NetConnection;
    const r = await c.send(i);
    idle.push(c);
    return r;
  };
  await closedLoop(connections, 1, one);
  const run = await measure(() => closedLoop(connections, seconds, one));
  for (const c of sockets) c.close();
  return { client: 'net', ...run };
}

let serverPid = 0;

/** One timed closed loop with its CPU figures and rates. */
async function measure(work: () => Promise<LoopResult>) {
  const { result: r, ...cpu } = await withCpu(serverPid, work);
  return {
    requestsPerS: Math.round(r.requests / r.s),
    sseEventsPerS: Math.round((r.requests * Number(arg('events', '22'))) / r.s),
    chunksPerRead: r3(r.chunks / Math.max(1, r.reads)),
    errors: r.errors,
    ...cpu,
  };
}

async function cannon(url: string, connections: number, seconds: number, events: number) {
  const run = async () => {
    const out = await autocannon({
      url: `${url}${PATH}`,
      connections,
      duration: seconds,
      method: 'POST',
      headers: HEADERS,
      body: BODY,
    });
    return { ...out, requests: Math.round(out.requests.average * seconds) };
  };
  const { result, ...cpu } = await withCpu(serverPid, run);
  const rps = result.requests / seconds;
  return {
    requestsPerS: Math.round(rps),
    sseEventsPerS: Math.round(rps * events),
    errors: result.errors + result.non2xx,
    ...cpu,
  };
}

async function main(): Promise<void> {
  const connections = Number(arg('connections', '128'));
  const seconds = Number(arg('seconds', '5'));
  const workerCounts = arg('workers', '1').split(',').map(Number);
  const clients = arg('clients', 'tokenload').split(',');
  const events = Math.max(3, Number(arg('events', '22')));
  const writes = Math.max(1, Number(arg('writes', '1')));
  const timing = streamTiming();
  const withCannon = arg('autocannon', 'yes') !== 'no';
  const server = await startServer();
  serverPid = server.child.pid ?? 0;
  const rows = [];
  try {
    if (withCannon) await cannon(server.url, connections, 1, events);
    for (const kind of clients) {
      if (kind === 'undici') rows.push(await undiciFloor(server.url, connections, seconds, events));
      else if (kind === 'net') rows.push(await netFloor(server.url, connections, seconds, events));
      else
        for (const workers of workerCounts) {
          const ours = await tokenload(server.url, connections, seconds, workers);
          if (!withCannon) {
            rows.push(ours);
            continue;
          }
          const theirs = await cannon(server.url, connections, seconds, events);
          rows.push({
            ...ours,
            autocannon: theirs,
            ratioVsAutocannon: r3(ours.requestsPerS / theirs.requestsPerS),
          });
        }
    }
  } finally {
    server.child.send('stop');
  }
  const parts = bodyWrites(events, timing, writes);
  const bytes = parts.reduce((n, b) => n + b.length, 0);
  const method = `loopback node:http server in a child process answering every request with the same ${bytes} B, ${events}-event SSE body (${events - 2} content events, a usage chunk, [DONE]) in ${parts.length} write(s) (${describeTiming(timing)}${timing.oneWrite && parts.length > 1 ? ', one event-loop turn apart' : ''}); every client sends the same POST ${PATH} with the same ${BODY.length} B JSON body and headers (${Object.keys(HEADERS).join(', ')}; x-request-id varies per request), closed loop, ${connections} requests in flight, 1 s warm-up then ${seconds} s; tokenload: stream decoded and stamped per read, parsed per event (createClient, workers as listed); undici: a Pool with tokenload's options and a handler that only counts reads; net: one net.Socket per connection, a 'data' listener counting bytes; autocannon 8 (in this process): ${connections} connections, ${seconds} s, no decoding (events/s = req/s × ${events}); each tokenload row is followed by its autocannon run; CPU: this process (process.cpuUsage, all threads) per request and per content chunk, its main thread and the server child (/proc, 10 ms ticks) per request; chunksPerRead: content chunks per body read that carried them`;
  console.log(JSON.stringify({ benchmark: 'client ceiling', machine: machine(), method, rows }, null, 2));
}

if (process.argv.includes('--serve'))
  serve(Math.max(3, Number(arg('events', '22'))), streamTiming(), Math.max(1, Number(arg('writes', '1'))));
else await main();
