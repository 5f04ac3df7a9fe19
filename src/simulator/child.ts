/**
 * Child-process entry of {@link spawnSimulator}: starts the simulator with the options received
 * in the first IPC message, reports `{ type: 'listening', url, port }` (or `{ type: 'error' }`),
 * closes on `{ type: 'shutdown' }`, and exits when the parent disconnects (parent died).
 * SIGINT is ignored: a terminal Ctrl-C reaches the whole process group, and the parent's grace
 * period needs the simulator to keep answering the requests still in flight; the parent closes it.
 */
import { startSimulator } from './server.js';

interface StartMessage {
  type: 'start';
  options: Record<string, unknown>;
}

function send(msg: unknown): void {
  process.send?.(msg);
}

async function start(msg: StartMessage): Promise<void> {
  try {
    const sim = await startSimulator(msg.options);
    let closing = false;
    const stop = async (): Promise<void> => {
      if (closing) return;
      closing = true;
      await sim.close();
      process.exit(0);
    };
    process.on('message', (m: { type?: string }) => {
      if (m.type === 'shutdown') void stop();
    });
    process.on('disconnect', () => void stop());
    send({ type: 'listening', url: sim.url, port: sim.port });
  } catch (err) {
    send({ type: 'error', message: (err as Error).message });
    process.exit(1);
  }
}

process.once('message', (m: StartMessage) => {
  if (m.type === 'start') void start(m);
});
process.on('disconnect', () => process.exit(0));
process.on('SIGINT', () => undefined);
