/**
 * Where the CLI writes, and the one function that turns any error into what the user reads and the
 * process exit code: usage and configuration errors 2, bad input files and an unusable environment
 * 1, an interrupt 130 (see {@link ERROR_CODES}); anything else is a bug, printed with its stack and a
 * request to report it, exit code {@link EXIT_INTERNAL}.
 */
import { CommanderError } from 'commander';
import { ERROR_CODES, EXIT_INTERNAL, exitCodeOf } from '../errors.js';
import { packageVersion } from '../util/package-root.js';

/** Output streams of a command (injected by tests). */
export interface CliIo {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** {@link CliIo} on `process.stdout` / `process.stderr`. */
export const PROCESS_IO: CliIo = {
  out: (text) => {
    process.stdout.write(text);
  },
  err: (text) => {
    process.stderr.write(text);
  },
};

let closedOutputIgnored = false;

/**
 * Keeps a closed reader from crashing the CLI: when what reads stdout or stderr goes away (`| head`),
 * the next write fails with EPIPE; that output is dropped, and the run goes on writing its artifacts.
 * Any other stream error is rethrown. Installed once per process, however often it is called.
 */
export function ignoreClosedOutput(): void {
  if (closedOutputIgnored) return;
  closedOutputIgnored = true;
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
    });
  }
}

/** Exit code of a usage error (unknown flag, bad value, broken rule). */
export const EXIT_USAGE = ERROR_CODES.E_CONFIG.exitCode;

/**
 * Reports `err` on `write` and returns the exit code it maps to. Commander has already printed its
 * own usage errors; help and version are not errors (0).
 */
export function exitCodeFor(err: unknown, write: (text: string) => void): number {
  if (err instanceof CommanderError) {
    const shown = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code);
    return shown ? 0 : EXIT_USAGE;
  }
  const code = exitCodeOf(err);
  if (code !== EXIT_INTERNAL) {
    write(`error: ${(err as Error).message}\n`);
    return code;
  }
  const text = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  write(
    `${text}\n\ntokenload ${packageVersion()}: internal error. This is a bug in tokenload, not in your input: please report it with the command line and the output above.\n`,
  );
  return EXIT_INTERNAL;
}

/** Runs `work` and returns 0, or the exit code of its error (reported on `io.err`). */
export async function guarded(io: CliIo, work: () => Promise<void>): Promise<number> {
  try {
    await work();
    return 0;
  } catch (err) {
    return exitCodeFor(err, io.err);
  }
}
