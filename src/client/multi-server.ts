/**
 * One client over several servers (`--url` given more than once): one pooled client per server, each
 * with its own undici Pool and connector (its own connections and pre-opened sockets), and a request
 * goes to the client its {@link SendRequest.server} index names. Which server a request goes to is
 * the sender's choice (request/sender.ts: sessions round-robin, every turn of a session on one server);
 * this module only routes. Pre-opened and reserved connections are split evenly over the servers,
 * as the sessions are.
 */
import { failedRecord } from '../record/failure.js';
import { emptyRecord } from '../record/raw-record.js';
import type { RawRecord } from '../record/types.js';
import { monotonicNowNs } from '../timing/clock.js';
import { type PrewarmResult, sumPrewarms } from './connector.js';
import type { SendRequest } from './types.js';
import type { PooledHttpClient } from './undici-client.js';

/** Share `i` (0-based) of `count` split over `parts`: the shares differ by at most one and sum to `count`. */
function evenShare(count: number, parts: number, i: number): number {
  return Math.floor((count + i) / parts);
}

/**
 * The record of a request that names a server this client does not have (a bug on our side,
 * recorded as a `client_error`, never thrown).
 */
function noServerRecord(request: SendRequest, servers: number): RawRecord {
  const now = monotonicNowNs();
  const raw = emptyRecord(request.identity);
  raw.startNs = now;
  return failedRecord(raw, 'DispatchError', `server ${request.server} of ${servers} does not exist`, now);
}

/**
 * Combines one client per server into one {@link PooledHttpClient}; with a single client, returns it.
 * Keyed sends must use keys unique across all servers (a cancel is passed to every client; only the
 * one holding the key acts on it).
 */
export function createMultiServerClient(clients: readonly PooledHttpClient[]): PooledHttpClient {
  if (clients.length === 1) return clients[0] as PooledHttpClient;
  const n = clients.length;
  return {
    send: (request) => {
      const client = clients[request.server ?? 0];
      return client === undefined ? Promise.resolve(noServerRecord(request, n)) : client.send(request);
    },
    sendKeyed: (request, key, done) => {
      const client = clients[request.server ?? 0];
      if (client === undefined) done(noServerRecord(request, n), key);
      else client.sendKeyed(request, key, done);
    },
    cancel: (key, reason) => {
      for (const client of clients) client.cancel(key, reason);
    },
    prewarm: async (count): Promise<PrewarmResult> => {
      const t0 = performance.now();
      const results = await Promise.all(clients.map((c, i) => c.prewarm(evenShare(count, n, i))));
      return sumPrewarms(count, results, performance.now() - t0);
    },
    reserveConnections: (count, dueNs) => {
      for (let i = 0; i < n; i++) clients[i]?.reserveConnections?.(evenShare(count, n, i), dueNs);
    },
    close: async () => {
      await Promise.all(clients.map((c) => c.close()));
    },
  };
}
