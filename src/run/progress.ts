/**
 * Live progress, off the hot path: a 1 s sampler reads counters the record sink updates; nothing
 * runs per chunk. On a TTY (`--ui simple`) a cli-progress bar on stderr redraws one frame each
 * second; off a TTY (CI, pipes) the same frame is printed as a plain `progress:` line every 5 s.
 * Both end with a final frame when the phase ends, whose counts are the summary's: requests done,
 * of which ok (`request_count`) and errors (`error_request_count`). `--ui none` prints nothing.
 *
 * A frame shows requests done / total with a bar when the total is known; a replay whose total is
 * not (a streamed trace) shows the rows read and sessions seen so far instead. Then in flight,
 * errors, the request rate over the last second and the send lag p50 of the last second's requests.
 *
 * During a quiet gap of a replay (its next request due more than {@link QUIET_GAP_S} s away) the frame
 * ends with when it is due, e.g. `next request due in 3 h 12 min (trace time 3:12:05)`, so a trace
 * read in the wrong unit does not look hung; off a TTY that line is printed as soon as the gap is seen
 * (the sampler looks each second), not at the next 5 s line.
 */
import { type Params, SingleBar } from 'cli-progress';
import type { ProcessedRecord } from '../record/types.js';
import type { NextDue, ReplayProgress } from '../timing/types.js';
import type { Logger } from '../util/run-env.js';

/** Progress reporter handle. */
export interface Progress {
  /** A request was sent. */
  onSend(): void;
  /** A request finished (success or failure). */
  onRecord(record: ProcessedRecord): void;
  /** Stops sampling and shows the final frame (all counts final). */
  stop(): void;
}

/** What a progress frame shows. */
export interface ProgressSnapshot {
  /** Requests finished, failed ones included. */
  done: number;
  /** Requests the phase will send; null when unknown (duration-bound, streamed trace). */
  total: number | null;
  inFlight: number;
  /** Finished requests that failed (the summary's `error_request_count`). */
  errors: number;
  ratePerS: number;
  /** Median send lag of the requests finished in the last interval, ms; null when none had a schedule. */
  lagP50Ms: number | null;
  /** Rows read and sessions seen by a replay; null for other loads. */
  replay: ReplayProgress | null;
}

const count = (n: number): string => n.toLocaleString('en-US');

/** A replay whose next request is due more than this many seconds away is in a quiet gap. */
export const QUIET_GAP_S = 10;

/** The replay's next request when it is due more than {@link QUIET_GAP_S} s from now, else null. */
function quietGap(replay: ReplayProgress | null): NextDue | null {
  const next = replay?.nextDue ?? null;
  return next !== null && next.inNs > QUIET_GAP_S * 1e9 ? next : null;
}

/** A wait in words, to the second: `3 h 12 min`, `4 min 5 s`, `42 s`. */
function waitText(ns: number): string {
  const s = Math.round(ns / 1e9);
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

/** Trace ms as `H:MM:SS` (hours not wrapped; a fraction of a second dropped). */
function traceClock(ms: number): string {
  const s = Math.floor(ms / 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${Math.floor(s / 3600)}:${two(Math.floor((s % 3600) / 60))}:${two(s % 60)}`;
}

/** ` | next request due in 3 h 12 min (trace time 3:12:05)` during a quiet gap, else ''. */
function gapText(replay: ReplayProgress | null): string {
  const gap = quietGap(replay);
  return gap === null
    ? ''
    : ` | next request due in ${waitText(gap.inNs)} (trace time ${traceClock(gap.traceMs)})`;
}

/** The frame's counts before the rate: rows read and sessions (a replay), done (/ total). */
function countsText(s: ProgressSnapshot): string {
  const parts: string[] = [];
  if (s.replay !== null)
    parts.push(`rows read ${count(s.replay.rowsRead)}`, `sessions ${count(s.replay.sessions)}`);
  parts.push(s.total === null ? `done ${count(s.done)}` : `done ${count(s.done)}/${count(s.total)}`);
  return parts.join(' | ');
}

/**
 * The text of one live frame (the bar's text after its graphic; the plain line after `progress: `),
 * e.g. `rows read 1,204 | sessions 310 | done 1,180 | in flight 24 | errors 0 | 41.0 req/s | lag p50 0.42 ms`.
 */
export function formatProgress(s: ProgressSnapshot): string {
  const lag = s.lagP50Ms === null ? '-' : `${s.lagP50Ms.toFixed(2)} ms`;
  return `${countsText(s)} | in flight ${count(s.inFlight)} | errors ${count(s.errors)} | ${s.ratePerS.toFixed(1)} req/s | lag p50 ${lag}${gapText(s.replay)}`;
}

/**
 * The final frame of a phase: its counts are the summary's, e.g.
 * `finished: rows read 94 | sessions 94 | done 94 | ok 93 | errors 1 | in flight 0`.
 */
export function formatFinalProgress(s: ProgressSnapshot): string {
  return `finished: ${countsText(s)} | ok ${count(s.done - s.errors)} | errors ${count(s.errors)} | in flight ${count(s.inFlight)}`;
}

/** Counters updated by the run, sampled by the reporter. */
class Counters {
  done = 0;
  sent = 0;
  errors = 0;
  recentLags: number[] = [];
  lastDone = 0;
  lastAt = performance.now();

  constructor(
    private readonly total: number | null,
    readonly replay: () => ReplayProgress | null,
  ) {}

  snapshot(): ProgressSnapshot {
    const now = performance.now();
    const rate = ((this.done - this.lastDone) * 1000) / Math.max(1, now - this.lastAt);
    this.lastDone = this.done;
    this.lastAt = now;
    const lags = this.recentLags.sort((a, b) => a - b);
    this.recentLags = [];
    return {
      done: this.done,
      total: this.total,
      inFlight: this.sent - this.done,
      errors: this.errors,
      ratePerS: rate,
      lagP50Ms: lags.length === 0 ? null : (lags[lags.length >> 1] as number),
      replay: this.replay(),
    };
  }
}

/** Options of {@link startProgress}. */
export interface ProgressOptions {
  /** Requests the phase will send; null when unknown (duration-bound, streamed trace). */
  total: number | null;
  /** A replay's rows read and sessions so far (`LoadStrategy.replayProgress`); absent for other loads. */
  replay?: () => ReplayProgress | null;
  /** Where the bar draws; default `process.stderr`. A bar is drawn only when it is a TTY. */
  stream?: NodeJS.WriteStream;
}

/** Starts a progress reporter (see the module comment for what each `ui` shows). */
export function startProgress(ui: 'none' | 'simple', log: Logger, options: ProgressOptions): Progress {
  const c = new Counters(options.total, options.replay ?? (() => null));
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
  const stream = options.stream ?? process.stderr;
  if (stream.isTTY === true) return barProgress(c, stream, onSend, onRecord);
  // Each second: a line every 5 s, and one at once when a quiet gap (a new next request) begins.
  let ticks = 0;
  let announced: number | null = null;
  const timer = setInterval(() => {
    const gap = quietGap(c.replay());
    const fresh = gap !== null && gap.traceMs !== announced;
    if (gap !== null) announced = gap.traceMs;
    if (++ticks % 5 === 0 || fresh) log.info(`progress: ${formatProgress(c.snapshot())}`);
  }, 1000);
  timer.unref();
  return {
    onSend,
    onRecord,
    stop: () => {
      clearInterval(timer);
      log.info(`progress: ${formatFinalProgress(c.snapshot())}`);
    },
  };
}

/** The bar's payload: the frame to draw and whether it is the final one. */
interface Frame {
  snapshot: ProgressSnapshot;
  final: boolean;
}

/** Width of the bar graphic, characters. */
const BAR_WIDTH = 30;

/** cli-progress formatter: the bar graphic when the total is known, then the frame text. */
function drawFrame(_options: unknown, params: Params, payload: Frame): string {
  const s = payload.snapshot;
  const text = payload.final ? formatFinalProgress(s) : formatProgress(s);
  if (s.total === null) return ` ${text}`;
  const filled = Math.round(Math.min(1, Math.max(0, params.progress)) * BAR_WIDTH);
  return ` ${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)} ${text}`;
}

function barProgress(
  c: Counters,
  stream: NodeJS.WriteStream,
  onSend: () => void,
  onRecord: (r: ProcessedRecord) => void,
): Progress {
  const bar = new SingleBar({
    format: drawFrame,
    stream,
    hideCursor: true,
    clearOnComplete: false,
    noTTYOutput: false,
  });
  const draw = (final: boolean): void => {
    const snapshot = c.snapshot();
    const frame: Frame = { snapshot, final };
    bar.update(snapshot.total === null ? 0 : snapshot.done, frame);
  };
  const first = c.snapshot();
  bar.start(first.total ?? 1, 0, { snapshot: first, final: false });
  const timer = setInterval(() => draw(false), 1000);
  timer.unref();
  return {
    onSend,
    onRecord,
    stop: () => {
      clearInterval(timer);
      draw(true);
      bar.stop();
    },
  };
}
