/**
 * Ctrl-C and SIGTERM for a command that runs: the first stops it (no new requests; what is in flight
 * gets the grace period, every export is written), the second cancels in-flight requests, a third
 * (or 10 s after the second) exits at once with {@link EXIT_INTERRUPTED}.
 */
import { EXIT_INTERRUPTED } from '../errors.js';
import type { Logger } from '../util/run-env.js';

/** The signals a running command listens to, and how to stop listening. */
export interface StopSignals {
  /** Aborted by the first Ctrl-C / SIGTERM. */
  stop: AbortSignal;
  /** Aborted by the second. */
  force: AbortSignal;
  /** Removes the handlers (call when the command is done). */
  dispose: () => void;
}

/**
 * Installs the handlers; `firstWarning` is what the first signal prints (after the signal's name).
 */
export function listenForStop(log: Logger, firstWarning: string): StopSignals {
  const stop = new AbortController();
  const force = new AbortController();
  let signals = 0;
  const onSignal = (sig: NodeJS.Signals): void => {
    signals++;
    if (signals === 1) {
      log.warn(`${sig}: ${firstWarning}; press Ctrl-C again to cancel in-flight requests`);
      stop.abort();
    } else if (signals === 2) {
      log.warn(`${sig}: cancelling in-flight requests; exports follow (a third Ctrl-C exits at once)`);
      force.abort();
      // Something that cannot be interrupted (e.g. a hung file system call) must not hold the user.
      setTimeout(() => process.exit(EXIT_INTERRUPTED), 10_000).unref();
    } else {
      process.exit(EXIT_INTERRUPTED);
    }
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    stop: stop.signal,
    force: force.signal,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
