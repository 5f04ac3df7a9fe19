/**
 * Client ceiling: requests/s and SSE events/s tokenload's client sustains against a minimal loopback
 * server, side by side with autocannon against the same server in the same run.
 *
 * The server (this file run with `--serve`, in a child process) answers every request at once with
 * the same bytes: 20 `chat.completion.chunk` events, a finish chunk with usage and `[DONE]`
 * (22 events). tokenload POSTs and parses the stream (closed loop, C requests in flight);
 * autocannon GETs the same bytes with C connections and does not parse them.
 *
 *   npm run bench:client -- --connections 64 --seconds 5 --workers 1,2
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { oneOffIdentity } from '../src/client/send-once.js';
import type { HttpClient, SendRequest } from '../src/client/types.js';
import { createClient } from '../src/client/worker-factory.js';
import { ENDPOINTS } from '../src/endpoint/registry.js';
import { arg, machine, r3 } from './common.js';

const EVENTS_PER_RESPONSE = 22;

/** The part of autocannon's programmatic API used here (it ships no types). */
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
}) => Promise<{ requests: { average: number }; errors: number }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

function streamBytes(): Buffer {
  const chunk = (delta: object, finish: string | null, usage?: object) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }], ...(usage ? { usage } : {}) })}\n\n`;
  let out = '';
  for (let i = 0; i < 20; i++)
    out += chunk(i === 0 ? { role: 'assistant', content: ' tok' } : { content: ' tok' }, null);
  out += chunk({}, 'stop', { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 });
  return Buffer.from(`${out}data: [DONE]\n\n`);
}

function serve(): void {
  const body = streamBytes();
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'content-length': body.length });
      res.end(body);
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
  const child = fork(new URL(import.meta.url).pathname, ['--serve'], { execArgv: ['--import', 'tsx'] });
  return new Promise((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve({ child, url: `http://127.0.0.1:${m.port}` }));
    child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
  });
}

function requestOf(i: number): SendRequest {
  return {
    identity: { ...oneOffIdentity('m', 20), conversationId: `c${i}` },
    path: '/v1/chat/completions',
    headers: { 'x-request-id': `r${i}` },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }),
    stream: true,
    adapter: ENDPOINTS.chat,
    timeoutMs: 30_000,
  };
}

async function closedLoop(client: HttpClient, connections: number, seconds: number) {
  const endMs = performance.now() + seconds * 1000;
  let done = 0;
  let events = 0;
  let errors = 0;
  let i = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < endMs) {
        const raw = await client.send(requestOf(i++));
        done++;
        events += raw.chunks.length + 2;
        if (raw.error !== null) errors++;
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return {
    requestsPerS: Math.round(done / s),
    sseEventsPerS: Math.round(events / s),
    errors,
    processCpuMsPerRequest: r3((cpu.user + cpu.system) / 1000 / Math.max(1, done)),
  };
}

async function tokenload(url: string, connections: number, seconds: number, workers: number) {
  const client = createClient({ url, connections, workers }) as HttpClient & { ready?(): Promise<void> };
  await client.ready?.();
  await closedLoop(client, connections, 1); // warm-up: JIT, connections
  const result = await closedLoop(client, connections, seconds);
  await client.close();
  return { workers, ...result };
}

async function cannon(url: string, connections: number, seconds: number) {
  const result = await autocannon({ url: `${url}/v1/chat/completions`, connections, duration: seconds });
  const rps = result.requests.average;
  return {
    requestsPerS: Math.round(rps),
    sseEventsPerS: Math.round(rps * EVENTS_PER_RESPONSE),
    errors: result.errors,
  };
}

async function main(): Promise<void> {
  const connections = Number(arg('connections', '64'));
  const seconds = Number(arg('seconds', '5'));
  const workerCounts = arg('workers', '1,2').split(',').map(Number);
  const server = await startServer();
  const rows = [];
  try {
    await cannon(server.url, connections, 1);
    for (const workers of workerCounts) {
      const ours = await tokenload(server.url, connections, seconds, workers);
      const theirs = await cannon(server.url, connections, seconds);
      rows.push({
        ...ours,
        autocannon: theirs,
        ratioVsAutocannon: r3(ours.requestsPerS / theirs.requestsPerS),
      });
    }
  } finally {
    server.child.send('stop');
  }
  const method = `loopback node:http server in a child process answering every request at once with the same ${streamBytes().length} B, ${EVENTS_PER_RESPONSE}-event SSE body; tokenload: closed loop, ${connections} requests in flight, streamed POST parsed per event (createClient, workers as listed), 1 s warm-up then ${seconds} s; autocannon 8: ${connections} connections, GET of the same bytes, ${seconds} s, no parsing (events/s = req/s × ${EVENTS_PER_RESPONSE}); each tokenload row is followed by its autocannon run`;
  console.log(JSON.stringify({ benchmark: 'client ceiling', machine: machine(), method, rows }, null, 2));
}

if (process.argv.includes('--serve')) serve();
else await main();
