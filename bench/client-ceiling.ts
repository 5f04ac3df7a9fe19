/**
 * Client ceiling: requests/s and SSE events/s tokenload's client sustains against a minimal loopback
 * server, side by side with autocannon against the same server in the same run.
 *
 * The server (this file run with `--serve`, in a child process) answers every request with the same
 * bytes: `--events N` events (N − 2 `chat.completion.chunk` content events, a finish chunk with usage,
 * and `[DONE]`), in `--writes K` socket writes (one event-loop turn apart, so each is its own read).
 * Both clients send the same request: a POST of the same JSON body with the same headers.
 * tokenload parses the stream (closed loop, C requests in flight); autocannon reads the same bytes
 * with C connections and does not parse them.
 *
 *   npm run bench:client -- --connections 64 --seconds 5 --workers 1,2 --events 22 --writes 1
 *
 * `--autocannon no` skips autocannon (e.g. to profile tokenload alone with `node --cpu-prof`).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { HttpClient, SendRequest } from '../src/client/types.js';
import { createClient } from '../src/client/worker-factory.js';
import { threadCpuSeconds } from '../src/client/worker-protocol.js';
import { ENDPOINTS } from '../src/endpoint/registry.js';
import { packageVersion } from '../src/util/package-root.js';
import { oneOffIdentity } from '../test/helpers/send-once.js';
import { arg, machine, procCpuSeconds, r3 } from './common.js';

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

/** The response body as `writes` buffers split on event boundaries; `events` ≥ 3. */
function streamWrites(events: number, writes: number): Buffer[] {
  const chunk = (delta: object, finish: string | null, usage?: object) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  const content = events - 2;
  const all: string[] = [];
  for (let i = 0; i < content; i++)
    all.push(chunk(i === 0 ? { role: 'assistant', content: ' tok' } : { content: ' tok' }, null));
  all.push(chunk({}, 'stop', { prompt_tokens: 10, completion_tokens: content, total_tokens: 10 + content }));
  all.push('data: [DONE]\n\n');
  const parts = Math.min(writes, all.length);
  const out: Buffer[] = [];
  for (let p = 0; p < parts; p++) {
    const from = Math.floor((p * all.length) / parts);
    const to = Math.floor(((p + 1) * all.length) / parts);
    out.push(Buffer.from(all.slice(from, to).join('')));
  }
  return out;
}

function writeBody(res: ServerResponse, parts: Buffer[], i: number): void {
  const part = parts[i] as Buffer;
  if (i === parts.length - 1) res.end(part);
  else {
    res.write(part);
    setImmediate(writeBody, res, parts, i + 1);
  }
}

function serve(events: number, writes: number): void {
  const parts = streamWrites(events, writes);
  const length = parts.reduce((n, b) => n + b.length, 0);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': length });
      writeBody(res, parts, 0);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address === 'object') process.send?.({ port: address.port });
  });
  process.on('message', () => server.close(() => process.exit(0)));
}

function startServer(events: number, writes: number): Promise<{ child: ChildProcess; url: string }> {
  const args = ['--serve', '--events', String(events), '--writes', String(writes)];
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

/** Process, main-thread and server CPU over `work`, per request, in ms. */
async function withCpu<T extends { requests: number }>(serverPid: number, work: () => Promise<T>) {
  const cpu0 = process.cpuUsage();
  const main0 = mainThreadCpuSeconds();
  const server0 = procCpuSeconds(serverPid);
  const result = await work();
  const cpu = process.cpuUsage(cpu0);
  const mainS = mainThreadCpuSeconds() - main0;
  const serverS = procCpuSeconds(serverPid) - server0;
  const n = Math.max(1, result.requests);
  return {
    result,
    processCpuMsPerRequest: r3((cpu.user + cpu.system) / 1000 / n),
    mainThreadCpuMsPerRequest: r3((mainS * 1000) / n),
    serverCpuMsPerRequest: r3((serverS * 1000) / n),
  };
}

async function closedLoop(client: HttpClient, connections: number, seconds: number) {
  const endMs = performance.now() + seconds * 1000;
  let requests = 0;
  let events = 0;
  let errors = 0;
  let i = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < endMs) {
        const raw = await client.send(requestOf(i++));
        requests++;
        events += raw.chunks.length + 2;
        if (raw.error !== null) errors++;
      }
    }),
  );
  return { requests, events, errors, s: (performance.now() - t0) / 1000 };
}

async function tokenload(url: string, pid: number, connections: number, seconds: number, workers: number) {
  const client = createClient({ url, connections, workers }) as HttpClient & { ready?(): Promise<void> };
  await client.ready?.();
  await closedLoop(client, connections, 1); // warm-up: JIT, connections
  const { result: r, ...cpu } = await withCpu(pid, () => closedLoop(client, connections, seconds));
  await client.close();
  return {
    workers,
    requestsPerS: Math.round(r.requests / r.s),
    sseEventsPerS: Math.round(r.events / r.s),
    errors: r.errors,
    ...cpu,
  };
}

async function cannon(url: string, pid: number, connections: number, seconds: number, events: number) {
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
  const { result, ...cpu } = await withCpu(pid, run);
  const rps = result.requests / seconds;
  return {
    requestsPerS: Math.round(rps),
    sseEventsPerS: Math.round(rps * events),
    errors: result.errors + result.non2xx,
    ...cpu,
  };
}

async function main(): Promise<void> {
  const connections = Number(arg('connections', '64'));
  const seconds = Number(arg('seconds', '5'));
  const workerCounts = arg('workers', '1,2').split(',').map(Number);
  const events = Math.max(3, Number(arg('events', '22')));
  const writes = Math.max(1, Number(arg('writes', '1')));
  const withCannon = arg('autocannon', 'yes') !== 'no';
  const server = await startServer(events, writes);
  const pid = server.child.pid ?? 0;
  const rows = [];
  try {
    if (withCannon) await cannon(server.url, pid, connections, 1, events);
    for (const workers of workerCounts) {
      const ours = await tokenload(server.url, pid, connections, seconds, workers);
      if (!withCannon) {
        rows.push(ours);
        continue;
      }
      const theirs = await cannon(server.url, pid, connections, seconds, events);
      rows.push({
        ...ours,
        autocannon: theirs,
        ratioVsAutocannon: r3(ours.requestsPerS / theirs.requestsPerS),
      });
    }
  } finally {
    server.child.send('stop');
  }
  const parts = streamWrites(events, writes);
  const bytes = parts.reduce((n, b) => n + b.length, 0);
  const method = `loopback node:http server in a child process answering every request with the same ${bytes} B, ${events}-event SSE body (${events - 2} content events, a usage chunk, [DONE]) in ${parts.length} write(s) one event-loop turn apart; both clients send the same POST ${PATH} with the same ${BODY.length} B JSON body and headers (${Object.keys(HEADERS).join(', ')}; tokenload varies x-request-id per request); tokenload: closed loop, ${connections} requests in flight, stream decoded and stamped per read, parsed per event (createClient, workers as listed), 1 s warm-up then ${seconds} s; autocannon 8 (in this process): ${connections} connections, ${seconds} s, no decoding (events/s = req/s × ${events}); each tokenload row is followed by its autocannon run; CPU per request: this process (process.cpuUsage, all threads), its main thread and the server child (/proc, 10 ms ticks)`;
  console.log(JSON.stringify({ benchmark: 'client ceiling', machine: machine(), method, rows }, null, 2));
}

if (process.argv.includes('--serve'))
  serve(Math.max(3, Number(arg('events', '22'))), Math.max(1, Number(arg('writes', '1'))));
else await main();
