/**
 * Live progress, off the hot path: a 1 s sampler reads counters the record sink updates; nothing
 * runs per chunk. On a TTY (`--ui simple`) a cli-progress bar on stderr shows requests done / total
 * (or elapsed / duration), in flight, errors, request rate over the last second and the send lag p50
 * of the last second's requests; off a TTY (CI, pipes) the same facts are printed as a plain line
 * every 5 s. `--ui none` prints nothing.
 */
import { SingleBar } from 'cli-progress';
import type { ProcessedRecord } from '../record/types.js';

/** Where the run writes human messages (stderr in the CLI). */
export interface Logger {
  info(message: string): void;
  warn(message: string): void;
}

/** Progress reporter handle. */
export interface Progress {
  /** A request was sent. */
  onSend(): void;
  /** A request finished (success or failure). */
  onRecord(record: ProcessedRecord): void;
  stop(): void;
}

/** What the progress line shows. */
export interface ProgressSnapshot {
  done: number;
  total: number | null;
  inFlight: number;
  errors: number;
  ratePerS: number;
  /** Median send lag of the requests finished in the last interval, ms; null when none had a schedule. */
  lagP50Ms: number | null;
}

/** One human line for a snapshot. */
export function formatProgress(s: ProgressSnapshot): string {
  const done = s.total === null ? `${s.done}` : `${s.done}/${s.total}`;
  const lag = s.lagP50Ms === null ? '' : `, send lag p50 ${s.lagP50Ms.toFixed(2)} ms`;
  return `progress: ${done} requests done, ${s.inFlight} in flight, ${s.errors} errors, ${s.ratePerS.toFixed(1)} req/s${lag}`;
}

/** Counters updated by the run, sampled by the reporter. */
class Counters {
  done = 0;
  sent = 0;
  errors = 0;
  recentLags: number[] = [];
  lastDone = 0;
  lastAt = performance.now();

  snapshot(total: number | null): ProgressSnapshot {
    const now = performance.now();
    const rate = ((this.done - this.lastDone) * 1000) / Math.max(1, now - this.lastAt);
    this.lastDone = this.done;
    this.lastAt = now;
    const lags = this.recentLags.sort((a, b) => a - b);
    this.recentLags = [];
    return {
      done: this.done,
      total,
      inFlight: this.sent - this.done,
      errors: this.errors,
      ratePerS: rate,
      lagP50Ms: lags.length === 0 ? null : (lags[lags.length >> 1] as number),
    };
  }
}

/** Starts a progress reporter for `total` requests (null when unknown, e.g. duration-bound). */
export function startProgress(ui: 'none' | 'simple', log: Logger, total: number | null): Progress {
  const c = new Counters();
  const onSend = (): void => {
    c.sent++;
  };
  const onRecord = (r: ProcessedRecord): void => {
    c.done++;
    if (!r.valid) c.errors++;
    const lag = r.metrics.schedule_lag;
    if (typeof lag === 'number' && c.recentLags.length < 10_000) c.recentLags.push(lag);
  };
  if (ui === 'none') return { onSend, onRecord, stop: () => undefined };
  if (process.stderr.isTTY === true) return barProgress(c, total, onSend, onRecord);
  const timer = setInterval(() => log.info(formatProgress(c.snapshot(total))), 5000);
  timer.unref();
  return { onSend, onRecord, stop: () => clearInterval(timer) };
}

function barProgress(
  c: Counters,
  total: number | null,
  onSend: () => void,
  onRecord: (r: ProcessedRecord) => void,
): Progress {
  const bar = new SingleBar({
    format:
      ' {bar} {value}/{totalText} | in flight {inFlight} | errors {errors} | {rate} req/s | lag p50 {lag}',
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
    noTTYOutput: false,
  });
  bar.start(total ?? 1, 0, { totalText: total ?? '?', inFlight: 0, errors: 0, rate: '0.0', lag: '-' });
  const timer = setInterval(() => {
    const s = c.snapshot(total);
    bar.update(total === null ? 0 : s.done, {
      inFlight: s.inFlight,
      errors: s.errors,
      rate: s.ratePerS.toFixed(1),
      lag: s.lagP50Ms === null ? '-' : `${s.lagP50Ms.toFixed(2)} ms`,
      totalText: total ?? `${s.done} (open)`,
    });
  }, 1000);
  timer.unref();
  return {
    onSend,
    onRecord,
    stop: () => {
      clearInterval(timer);
      bar.update(c.done);
      bar.stop();
    },
  };
}
