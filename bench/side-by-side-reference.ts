/**
 * The reference client of bench/side-by-side.ts (`--client reference`): the least a client can do
 * to send streamed chat requests at a constant rate, so the same join shows what this machine and
 * the stub allow without tokenload. It opens `--connections` keep-alive sockets before the first
 * request, sleeps to each send time on a plain timer (sending every request that is due when it
 * wakes), writes each request as one hand-built HTTP/1.1 buffer, and stamps the first response read
 * that holds a `"content"` field (first token) and the read that ends the chunked body. No SSE or
 * JSON parsing, no tokenizer, no retries; a request that finds no idle socket opens a new one.
 * Requests still unanswered 30 s after the last send are left out of `--out` (the join counts them).
 *
 * Writes `--out` in the shape of tokenload's `profile_export.jsonl` (only the fields the join reads):
 * request_scheduled_ns, request_start_ns (before the write), request_sent_ns (after it returns),
 * request_end_ns, time_to_first_token and schedule_lag (start − scheduled), epoch ns via TimeBase.
 *
 *   node --import tsx bench/side-by-side-reference.ts --url http://127.0.0.1:PORT --out FILE
 *     [--request-rate 1000] [--request-count 3000] [--connections 200] [--isl 100]
 */
import { writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { TimeBase } from '../src/timing/clock.js';
import { arg } from './common.js';

const url = new URL(arg('url', 'http://127.0.0.1:8000'));
const rate = Number(arg('request-rate', '1000'));
const count = Number(arg('request-count', '3000'));
const connections = Number(arg('connections', '200'));
const isl = Number(arg('isl', '100'));
const out = arg('out', '');
const START_DELAY_MS = 100;

/** One request's stamps, monotonic ms (`performance.now()`). */
interface Exchange {
  id: string;
  scheduledMs: number;
  startMs: number;
  sentMs: number;
  firstTokenMs: number;
  endMs: number;
  failed: boolean;
}

const done: Exchange[] = [];
const idle: Socket[] = [];
const active = new Map<Socket, Exchange>();
const body = JSON.stringify({
  model: 'm',
  stream: true,
  stream_options: { include_usage: true },
  messages: [{ role: 'user', content: 'the '.repeat(isl) }],
});
const bodyBytes = Buffer.byteLength(body);

function onData(socket: Socket, data: Buffer): void {
  const now = performance.now();
  const ex = active.get(socket);
  if (ex === undefined) return;
  if (ex.firstTokenMs === 0 && data.includes('"content"')) ex.firstTokenMs = now;
  if (data.length >= 5 && data.toString('latin1', data.length - 5) === '0\r\n\r\n') {
    ex.endMs = now;
    active.delete(socket);
    done.push(ex);
    idle.push(socket);
  }
}

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: url.hostname, port: Number(url.port), noDelay: true }, () =>
      resolve(socket),
    );
    socket.on('data', (data: Buffer) => onData(socket, data));
    socket.on('error', reject);
    socket.on('close', () => {
      const ex = active.get(socket);
      if (ex !== undefined) {
        ex.failed = true;
        active.delete(socket);
        done.push(ex);
      }
    });
  });
}

async function send(i: number, scheduledMs: number): Promise<void> {
  const socket = idle.pop() ?? (await openSocket());
  const id = `reference-${i}`;
  const head =
    `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\ncontent-type: application/json\r\n` +
    `accept: text/event-stream\r\nx-request-id: ${id}\r\ncontent-length: ${bodyBytes}\r\n\r\n`;
  const ex: Exchange = {
    id,
    scheduledMs,
    startMs: performance.now(),
    sentMs: 0,
    firstTokenMs: 0,
    endMs: 0,
    failed: false,
  };
  active.set(socket, ex);
  socket.write(head + body);
  ex.sentMs = performance.now();
}

/** Sends request i at start + i/rate, every due request at each wake-up. */
async function schedule(): Promise<void> {
  const startMs = performance.now() + START_DELAY_MS;
  for (let i = 0; i < count; ) {
    const dueMs = startMs + (i * 1000) / rate;
    const waitMs = dueMs - performance.now();
    if (waitMs > 0) await new Promise((r) => setTimeout(r, waitMs));
    while (i < count && startMs + (i * 1000) / rate <= performance.now()) {
      void send(i, startMs + (i * 1000) / rate);
      i++;
    }
  }
}

function line(base: TimeBase, ex: Exchange): string {
  const ns = (ms: number): string => (ms === 0 ? 'null' : base.toEpochNs(ms * 1e6).toString());
  const ttft = ex.firstTokenMs === 0 ? null : ex.firstTokenMs - ex.startMs;
  return (
    `{"metadata":{"x_request_id":"${ex.id}","request_scheduled_ns":${ns(ex.scheduledMs)},"request_start_ns":${ns(ex.startMs)},` +
    `"request_sent_ns":${ns(ex.sentMs)},"request_end_ns":${ns(ex.endMs)}},"metrics":{` +
    (ttft === null ? '' : `"time_to_first_token":{"value":${ttft},"unit":"ms"},`) +
    `"schedule_lag":{"value":${ex.startMs - ex.scheduledMs},"unit":"ms"}},"error":${ex.failed || ttft === null ? '{"kind":"failed"}' : 'null'}}`
  );
}

if (out === '') throw new Error('side-by-side-reference: --out FILE is required');
idle.push(...(await Promise.all(Array.from({ length: connections }, openSocket))));
await schedule();
const giveUpMs = performance.now() + 30_000;
while (done.length < count && performance.now() < giveUpMs) await new Promise((r) => setTimeout(r, 10));
const base = new TimeBase();
writeFileSync(out, `${done.map((ex) => line(base, ex)).join('\n')}\n`);
for (const s of idle) s.destroy();
