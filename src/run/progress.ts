/**
 * Progress output off the hot path: a periodic status line (every 5 s, or every second on a TTY)
 * with requests done / total, errors and the current request rate. `--ui none` prints nothing.
 */
import type { ProcessedRecord } from '../record/types.js';

/** Where the run writes human messages (stderr in the CLI). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** Progress reporter handle. */
export interface Progress {
  onRecord(record: ProcessedRecord): void;
  stop(): void;
}

/** Starts a progress reporter for `total` requests (null when unknown, e.g. duration-bound). */
export function startProgress(ui: 'none' | 'simple', log: Logger, total: number | null): Progress {
  let done = 0;
  let errors = 0;
  let lastDone = 0;
  let lastAt = performance.now();
  if (ui === 'none') {
    return { onRecord: () => undefined, stop: () => undefined };
  }
  const everyMs = process.stderr.isTTY === true ? 1000 : 5000;
  const timer = setInterval(() => {
    const now = performance.now();
    const rate = ((done - lastDone) * 1000) / Math.max(1, now - lastAt);
    lastDone = done;
    lastAt = now;
    log.info(
      `progress: ${done}${total === null ? '' : `/${total}`} requests done, ${errors} errors, ${rate.toFixed(1)} req/s`,
    );
  }, everyMs);
  timer.unref();
  return {
    onRecord: (r) => {
      done++;
      if (!r.valid) errors++;
    },
    stop: () => clearInterval(timer),
  };
}
