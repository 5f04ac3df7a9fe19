/**
 * Runs the simulator in a child process (`child_process.fork` of `child.ts` / `child.js`), so its
 * step loop and tokenization never share an event loop with the benchmark client.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TokenloadError } from '../errors.js';
import type { SimulatorOptionsInput } from './options.js';

/** A simulator running in a child process. */
export interface SpawnedSimulator {
  /** Base URL, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Child process id. */
  pid: number;
  /** Asks the child to shut down and resolves when it has exited (SIGKILL after 5 s). */
  close(): Promise<void>;
}

/** Error starting the child (message from the child, or its exit code). */
export class SimulatorSpawnError extends TokenloadError {
  override readonly name = 'SimulatorSpawnError';
  constructor(message: string) {
    super('E_SIMULATOR', message);
  }
}

function childEntry(): { path: string; execArgv: string[] } {
  const ts = fileURLToPath(new URL('./child.ts', import.meta.url));
  const js = fileURLToPath(new URL('./child.js', import.meta.url));
  if (import.meta.url.endsWith('.ts') && existsSync(ts)) return { path: ts, execArgv: ['--import', 'tsx'] };
  return { path: js, execArgv: [] };
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function closer(child: ChildProcess): () => Promise<void> {
  return async () => {
    const exited = waitExit(child);
    if (child.connected) child.send({ type: 'shutdown' });
    else child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  };
}

/** Process-level settings of the child (not simulator options). */
export interface SpawnProcessOptions {
  /**
   * Extra Node flags for the child, after the loader flags; e.g.
   * `['--cpu-prof', '--cpu-prof-dir', dir]` to profile the simulator (written when it closes).
   */
  nodeArgs?: readonly string[];
}

/**
 * Starts the simulator in a child process.
 * @param options simulator options (must be JSON-serialisable; they are sent over IPC).
 * @param processOptions extra Node flags for the child.
 * @returns once the child listens: its URL, pid and `close()`.
 * @throws {SimulatorSpawnError} when the child fails to start or exits first.
 */
export function spawnSimulator(
  options: SimulatorOptionsInput = {},
  processOptions: SpawnProcessOptions = {},
): Promise<SpawnedSimulator> {
  const entry = childEntry();
  const child = fork(entry.path, [], {
    execArgv: [...entry.execArgv, ...(processOptions.nodeArgs ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void =>
      reject(new SimulatorSpawnError(`simulator child exited (${code})`));
    child.once('exit', onExit);
    child.once('error', (err) => reject(new SimulatorSpawnError(err.message)));
    child.on('message', (m: { type?: string; url?: string; message?: string }) => {
      if (m.type === 'listening' && typeof m.url === 'string') {
        child.off('exit', onExit);
        resolve({ url: m.url, pid: child.pid ?? -1, close: closer(child) });
      } else if (m.type === 'error') {
        reject(new SimulatorSpawnError(m.message ?? 'simulator failed to start'));
      }
    });
    child.send({ type: 'start', options });
  });
}
