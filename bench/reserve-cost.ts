/**
 * CPU cost of one `reserveConnections` call that finds enough free connections (the fixed
 * schedule's call per built request once the due time is within the connect lead): a loopback
 * server, a client holding `--connections` open idle connections, then `--calls` calls timed.
 *
 *   node --import tsx bench/reserve-cost.ts --connections 256 --calls 200000
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { createHttpClient } from '../src/client/undici-client.js';
import { ENDPOINTS } from '../src/endpoint/registry.js';
import { arg, machine } from './common.js';

const connections = Number(arg('connections', '256'));
const calls = Number(arg('calls', '200000'));

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.end('{}'));
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const client = createHttpClient({ url, connections });
const request = {
  identity: {
    conversationId: 'c',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: 'r',
    xCorrelationId: 'c',
    model: 'm',
    scheduledNs: null,
    inputTokens: null,
    requestedOutputTokens: null,
  },
  path: '/',
  headers: {},
  body: '{}',
  stream: false,
  adapter: ENDPOINTS.chat,
  timeoutMs: 10_000,
};
// Every connection opened and idle.
await Promise.all(Array.from({ length: connections }, () => client.send(request)));
await new Promise((resolve) => setTimeout(resolve, 50));
const load = loadavg()[0];
for (let i = 0; i < 10_000; i++) client.reserveConnections?.(1);
const cpu0 = process.cpuUsage();
const t0 = process.hrtime.bigint();
for (let i = 0; i < calls; i++) client.reserveConnections?.(1);
const wallNs = Number(process.hrtime.bigint() - t0);
const cpu = process.cpuUsage(cpu0);
await client.close();
server.close();
console.log(
  JSON.stringify(
    {
      benchmark: 'reserve-cost',
      machine: machine(),
      connections,
      calls,
      nsPerCall: Math.round(wallNs / calls),
      cpuNsPerCall: Math.round(((cpu.user + cpu.system) * 1000) / calls),
      loadAverage1m: load,
    },
    null,
    2,
  ),
);
