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
 *   response's end (the floor of any Node stream-based client: the socket read path alone);
 * - `net-onread`: the same with net's `onread` option (one reused buffer per socket, no stream
 *   machinery: the floor of any Node client);
 * - autocannon 8 (unless `--autocannon no`), after each tokenload row.
 *
 * `--chunk-slope R` splits each client's CPU into a fixed cost per request and a cost per chunk: R
 * alternating pairs of runs, one where the server answers with a single content event when the
 * full stream would end (same latency, same requests in flight, one read) and one with the full
 * stream (no autocannon then).
 *
 *   npm run bench:client -- --connections 128 --seconds 5 --workers 1 --clients tokenload,undici,net
 *   npm run bench:client -- --seconds 2 --chunk-slope 3 --clients tokenload,undici,net,net-onread
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

/**
 * The server. A request whose path has `?short` gets the same stream cut to one content event (then
 * the usage chunk and `[DONE]`, in one write) sent when the full stream's last write would be due:
 * same latency and requests in flight, one read instead of N − 2 (see `--chunk-slope`).
 */
function serve(events: number, timing: StreamTiming, writes: number): void {
  const full = bodyWrites(events, timing, writes);
  const short = [Buffer.concat(bodyWrites(3, { ...timing, oneWrite: true }, 1))];
  const shortDelayMs = timing.oneWrite ? 0 : timing.ttftMs + (full.length - 1) * timing.itlMs;
  const server = createServer((req, res) => {
    const isShort = req.url?.endsWith('?short') === true;
    const parts = isShort ? short : full;
    const length = parts.reduce((n, b) => n + b.length, 0);
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': length });
      const delayMs = isShort ? shortDelayMs : timing.ttftMs;
      if (delayMs > 0) {
        res.flushHeaders();
        setTimeout(writeBody, delayMs, res, parts, 0, timing.itlMs);
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

/**
 * Request `i` to `path`: the same body, its own conversation id and X-Request-ID (a counter, not a
 * random UUID).
 */
function requestOf(i: number, path: string): SendRequest {
  const requestId = `00000000-0000-0000-0000-${String(i).padStart(12, '0')}`;
  return {
    identity: { ...IDENTITY, conversationId: `c${i}`, xRequestId: requestId },
    path,
    headers: { 'x-request-id': requestId },
    body: BODY,
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs: 30_000,
  };
}

const mainThreadCpuSeconds = (): number => threadCpuSeconds((path) => readFileSync(path, 'utf8')) ?? 0;

/** What one request of a closed loop saw: content events, the body reads they came in, failure. */
interface OneResult {
  chunks: number;
  reads: number;
  error: boolean;
}

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
  one: (i: number) => Promise<OneResult>,
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

/** A client under test: sends request `i` to `path` and reports what it saw. */
interface BenchClient {
  name: string;
  one(i: number, path: string): Promise<OneResult>;
  close(): Promise<void>;
}

async function tokenloadClient(url: string, connections: number, workers: number): Promise<BenchClient> {
  const client = createClient({ urls: [url], connections, workers }) as HttpClient & {
    ready?(): Promise<void>;
  };
  await client.ready?.();
  return {
    name: workers > 1 ? `tokenload (${workers} workers)` : 'tokenload',
    one: async (i, path) => {
      const raw = await client.send(requestOf(i, path));
      return { chunks: raw.chunks.length, reads: readsOf(raw.chunks), error: raw.error !== null };
    },
    close: () => client.close(),
  };
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

/** Content events of a response to `path` (the floors do not parse them). */
function eventsOf(path: string, events: number): number {
  return path.endsWith('?short') ? 1 : events - 2;
}

function undiciClient(url: string, connections: number, events: number): BenchClient {
  const pool = new Pool(new URL(url).origin, {
    connections,
    pipelining: 1,
    headersTimeout: 0,
    bodyTimeout: 0,
  });
  const one = (i: number, path: string) =>
    new Promise<OneResult>((resolve) => {
      const headers = requestHeaders(requestOf(i, path), HEADERS['user-agent'] as string);
      const handler = new CountingHandler((h, error) =>
        resolve({ chunks: eventsOf(path, events), reads: h.reads, error }),
      );
      pool.dispatch({ path, method: 'POST', headers, body: BODY }, handler);
    });
  return { name: 'undici', one, close: () => pool.destroy() };
}

/**
 * One keep-alive socket that sends the request and counts the response's bytes (header block, then
 * `content-length` body bytes): the floor of any Node client.
 */
class NetConnection {
  private readonly socket: Socket;
  private need = -1;
  private head = '';
  private reads = 0;
  private chunks = 0;
  private resolve: ((r: OneResult) => void) | null = null;

  /**
   * @param onread read with net's `onread` option (one reused buffer, no stream machinery) instead
   *   of a `data` listener
   */
  constructor(port: number, onread: boolean) {
    if (onread) {
      const buffer = Buffer.allocUnsafe(65536);
      const callback = (n: number, b: Buffer): boolean => {
        this.onData(b.subarray(0, n));
        return true;
      };
      this.socket = connect({ port, host: '127.0.0.1', onread: { buffer, callback } });
    } else {
      this.socket = connect(port, '127.0.0.1');
      this.socket.on('data', (b: Buffer) => this.onData(b));
    }
    this.socket.setNoDelay(true);
  }

  send(i: number, path: string, chunks: number): Promise<OneResult> {
    const headers = requestHeaders(requestOf(i, path), HEADERS['user-agent'] as string);
    let text = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${Buffer.byteLength(BODY)}\r\n`;
    for (const name in headers) text += `${name}: ${headers[name]}\r\n`;
    this.socket.write(`${text}\r\n${BODY}`);
    this.need = -1;
    this.head = '';
    this.reads = 0;
    this.chunks = chunks;
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
    if (this.need <= 0) this.resolve?.({ chunks: this.chunks, reads: this.reads, error: false });
  }

  close(): void {
    this.socket.destroy();
  }
}

function netClient(url: string, connections: number, events: number, onread: boolean): BenchClient {
  const port = Number(new URL(url).port);
  const sockets = Array.from({ length: connections }, () => new NetConnection(port, onread));
  // One loop per connection: a loop always finds a connection idle.
  const idle: NetConnection[] = [...sockets];
  const one = async (i: number, path: string) => {
    const c = idle.pop() as NetConnection;
    const r = await c.send(i, path, eventsOf(path, events));
    idle.push(c);
    return r;
  };
  const close = async () => {
    for (const c of sockets) c.close();
  };
  return { name: onread ? 'net-onread' : 'net', one, close };
}

let serverPid = 0;

/** One timed closed loop of `client` on `path` with its CPU figures and rates. */
async function measure(client: BenchClient, path: string, connections: number, seconds: number) {
  const one = (i: number) => client.one(i, path);
  const { result: r, ...cpu } = await withCpu(serverPid, () => closedLoop(connections, seconds, one));
  return {
    requestsPerS: Math.round(r.requests / r.s),
    chunksPerRequest: r3(r.chunks / Math.max(1, r.requests)),
    chunksPerRead: r3(r.chunks / Math.max(1, r.reads)),
    errors: r.errors,
    ...cpu,
  };
}

/** Median of a non-empty list. */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

/**
 * `--chunk-slope R`: R alternating pairs of runs on one client, each request answered with one
 * content event (`?short`) or the full stream at the same latency; the per-chunk cost is the
 * difference of the medians over the extra chunks, the fixed cost what is left of a one-chunk request.
 */
async function chunkSlope(client: BenchClient, connections: number, seconds: number, reps: number) {
  const short: number[] = [];
  const full: number[] = [];
  let chunks = 0;
  for (let r = 0; r < reps; r++) {
    short.push((await measure(client, `${PATH}?short`, connections, seconds)).processCpuMsPerRequest ?? 0);
    const f = await measure(client, PATH, connections, seconds);
    full.push(f.processCpuMsPerRequest ?? 0);
    chunks = f.chunksPerRequest ?? 0;
  }
  const perChunkUs = ((median(full) - median(short)) * 1000) / Math.max(1, chunks - 1);
  return {
    client: client.name,
    chunksPerRequest: chunks,
    oneChunkCpuMsPerRequest: short.map((x) => r3(x)),
    fullCpuMsPerRequest: full.map((x) => r3(x)),
    perChunkCpuUs: r3(perChunkUs),
    fixedCpuMsPerRequest: r3(median(short) - perChunkUs / 1000),
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

/** The clients named by `--clients`, in order (`tokenload` once per `--workers` count). */
async function clientsOf(url: string, connections: number, events: number): Promise<BenchClient[]> {
  const out: BenchClient[] = [];
  for (const kind of arg('clients', 'tokenload').split(',')) {
    if (kind === 'undici') out.push(undiciClient(url, connections, events));
    else if (kind === 'net' || kind === 'net-onread')
      out.push(netClient(url, connections, events, kind === 'net-onread'));
    else
      for (const workers of arg('workers', '1').split(',').map(Number))
        out.push(await tokenloadClient(url, connections, workers));
  }
  return out;
}

async function main(): Promise<void> {
  const connections = Number(arg('connections', '128'));
  const seconds = Number(arg('seconds', '5'));
  const events = Math.max(3, Number(arg('events', '22')));
  const writes = Math.max(1, Number(arg('writes', '1')));
  const slopeReps = Number(arg('chunk-slope', '0'));
  const timing = streamTiming();
  const withCannon = arg('autocannon', 'yes') !== 'no' && slopeReps === 0;
  const server = await startServer();
  serverPid = server.child.pid ?? 0;
  const rows = [];
  try {
    if (withCannon) await cannon(server.url, connections, 1, events);
    for (const client of await clientsOf(server.url, connections, events)) {
      await measure(client, PATH, connections, 1); // warm-up: JIT, connections
      if (slopeReps > 0) rows.push(await chunkSlope(client, connections, seconds, slopeReps));
      else {
        const ours = { client: client.name, ...(await measure(client, PATH, connections, seconds)) };
        if (!withCannon || !client.name.startsWith('tokenload')) rows.push(ours);
        else {
          const theirs = await cannon(server.url, connections, seconds, events);
          rows.push({
            ...ours,
            autocannon: theirs,
            ratioVsAutocannon: r3(ours.requestsPerS / theirs.requestsPerS),
          });
        }
      }
      await client.close();
    }
  } finally {
    server.child.send('stop');
  }
  const parts = bodyWrites(events, timing, writes);
  const bytes = parts.reduce((n, b) => n + b.length, 0);
  const slope =
    slopeReps > 0
      ? `; --chunk-slope ${slopeReps}: per client ${slopeReps} alternating pairs of ${seconds} s runs, one answering each request with 1 content event (+ usage chunk and [DONE], one write) when the full stream's last write would be due (same latency and in-flight count), one with the full stream; perChunkCpuUs = (median full − median one-chunk) / (chunks − 1), fixedCpuMsPerRequest = median one-chunk − perChunkCpuUs`
      : '';
  const method = `loopback node:http server in a child process answering every request with the same ${bytes} B, ${events}-event SSE body (${events - 2} content events, a usage chunk, [DONE]) in ${parts.length} write(s) (${describeTiming(timing)}${timing.oneWrite && parts.length > 1 ? ', one event-loop turn apart' : ''}); every client sends the same POST ${PATH} with the same ${BODY.length} B JSON body and headers (${Object.keys(HEADERS).join(', ')}; x-request-id varies per request), closed loop, ${connections} requests in flight, 1 s warm-up then ${seconds} s; tokenload: stream decoded and stamped per read, parsed per event (createClient, workers as listed); undici: a Pool with tokenload's options and a handler that only counts reads; net: one net.Socket per connection, a 'data' listener counting bytes; net-onread: the same reading through net's onread option (one reused buffer); autocannon 8 (in this process): ${connections} connections, ${seconds} s, no decoding; each tokenload row is followed by its autocannon run; CPU: this process (process.cpuUsage, all threads) per request and per content chunk, its main thread and the server child (/proc, 10 ms ticks) per request; chunksPerRead: content chunks per body read that carried them${slope}`;
  console.log(JSON.stringify({ benchmark: 'client ceiling', machine: machine(), method, rows }, null, 2));
}

if (process.argv.includes('--serve'))
  serve(Math.max(3, Number(arg('events', '22'))), streamTiming(), Math.max(1, Number(arg('writes', '1'))));
else await main();
