/** A loopback port nothing listens on (for a server that never comes up, or one started later). */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago (listened on, then closed). */
export function freePort(): Promise<number> {
  const probe = createServer();
  return new Promise((resolve) =>
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    }),
  );
}
