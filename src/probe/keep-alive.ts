/**
 * How long the server keeps an idle connection open: one `GET` on a fresh keep-alive connection,
 * then the connection is left idle and watched until the server closes it or `idleS` pass. A raw
 * socket (not a pool) so that nothing on the client side closes it first: undici closes idle
 * connections on its own timer, shortened by the server's `Keep-Alive` hint.
 */
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';

/** What the idle test saw. */
export interface IdleResult {
  /** Seconds from the end of the answer to the server's close; null when it stayed open `idleS`. */
  closedAfterS: number | null;
  /** Why the test could not run (connect failed, no answer); null when it ran. */
  error: string | null;
}

/** Silence after the last byte of the answer that ends it (the answer's length is not parsed). */
const ANSWER_DONE_MS = 150;

function open(url: URL): Socket {
  const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
  if (url.protocol === 'https:') return tlsConnect({ host: url.hostname, port, servername: url.hostname });
  return netConnect({ host: url.hostname, port });
}

function requestText(url: URL, headers: Record<string, string>): string {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, 'connection: keep-alive'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * Sends `GET url` with `headers` on a new connection and watches it idle for up to `idleS` seconds.
 * Never rejects.
 */
export function idleKeepAlive(
  url: string,
  headers: Record<string, string>,
  idleS: number,
): Promise<IdleResult> {
  const target = new URL(url);
  return new Promise((resolve) => {
    const socket = open(target);
    const startMs = performance.now();
    let lastDataMs = 0;
    let idleFromMs: number | null = null;
    let done = false;
    const finish = (result: IdleResult): void => {
      if (done) return;
      done = true;
      clearInterval(tick);
      socket.destroy();
      resolve(result);
    };
    const tick = setInterval(() => {
      const now = performance.now();
      if (idleFromMs === null && lastDataMs > 0 && now - lastDataMs >= ANSWER_DONE_MS)
        idleFromMs = lastDataMs;
      if (idleFromMs !== null && now - idleFromMs >= idleS * 1000)
        finish({ closedAfterS: null, error: null });
      else if (idleFromMs === null && lastDataMs === 0 && now - startMs > 10_000)
        finish({ closedAfterS: null, error: 'no answer to the GET within 10 s' });
    }, 25);
    socket.setNoDelay(true);
    socket.once(target.protocol === 'https:' ? 'secureConnect' : 'connect', () =>
      socket.write(requestText(target, headers)),
    );
    socket.on('data', () => {
      lastDataMs = performance.now();
    });
    socket.once('close', () => {
      if (lastDataMs === 0)
        return finish({ closedAfterS: null, error: 'the connection closed before an answer' });
      finish({ closedAfterS: Math.round((performance.now() - lastDataMs) / 10) / 100, error: null });
    });
    socket.once('error', (err) => finish({ closedAfterS: null, error: err.message }));
  });
}
