/**
 * Open-loop request rate (AIPerf `--request-rate`): arrival ticks on ONE absolute timeline,
 * `t_{k+1} = t_k + interval_k` from the start, never relative sleeps. At each tick a ready
 * continuation turn (previous turn completed and its delay passed) is sent if there is one, else a
 * new session starts (AIPerf gives continuations priority). Catch-up is bounded: when the loop is
 * more than `maxCatchupNs` behind a tick it re-anchors the timeline to now and counts it, instead of
 * bursting an unbounded backlog. With `concurrency` the loop waits for a session slot after the tick
 * (sleep-then-gate). Such a wait is queueing the load asked for, not client lateness: lateness is
 * measured from the later of the tick and the moment the cap let the loop go, so the ticks behind a
 * full cap keep their intended times (no re-anchor, nothing dropped; coordinated omission would hide
 * the backlog) and each send carries the wait as its `concurrency_wait`. A client stall still
 * re-anchors, by the stall only. The rate follows a {@link RateCurve}
 * (constant, the `--request-rate-ramp-duration` ramp, or `--request-rate-series`): each interval of
 * the arrival process is warped onto it.
 * When a tick is sure to start a new session, that session's request is prepared before the sleep,
 * so building it never delays the send.
 */
import type { Conversation, Turn } from '../dataset/types.js';
import type { IntervalSource } from './arrivals.js';
import { RampedSemaphore } from './ramped-semaphore.js';
import type { RateCurve } from './rate-curve.js';
import { IssueBudget, type SessionSource, type StopConditions } from './session-source.js';
import type { LoadStrategy, PacingReport, PreparedSend, RequestRateReport, StrategyInput } from './types.js';

/** Options of the request-rate strategy. */
export interface RequestRateOptions {
  /** The nominal rate, requests/s: the rate `intervals` are drawn at, which `curve` scales. */
  ratePerS: number;
  intervals: IntervalSource;
  source: SessionSource;
  stop: StopConditions;
  /** Session-slot cap (rate + concurrency). */
  concurrency?: number;
  /** The cap's slots open one by one over this time from the first tick, ns (`--concurrency-ramp-duration`). */
  concurrencyRampNs?: number;
  /**
   * The rate over time as a factor of `ratePerS` (a ramp, or a series over a nominal 1/s); absent:
   * constant. Past its end (0 req/s for good) no tick is left and issuing stops.
   */
  curve?: RateCurve;
  /** Largest backlog sent as a burst before re-anchoring, ns (default {@link DEFAULT_MAX_CATCHUP_NS}). */
  maxCatchupNs?: number;
  /** The first arrival comes this long after the start, ns (a shard's phase: shard/shard-run.ts); default 0. */
  firstTickNs?: number;
  /** The arrivals in words for the description (`poisson`, `gamma, smoothness 0.8`); absent: not said. */
  arrivals?: string;
}

/**
 * Default catch-up bound, ns: 100 ms. AIPerf's newest mainline uses 10 ms
 * (`AIPERF_TIMING_MAX_CATCHUP_SECONDS`), so one garbage-collection pause or scheduler hiccup of a
 * few ms on a small machine already re-anchors the timeline and silently drops those ticks from the
 * offered load (measured: 0.2 % short at 1,000 requests/s). With 100 ms such a stall is caught up by
 * sending the missed ticks at once, each recorded with its true lateness (`schedule_lag`); only a
 * client that stays behind re-anchors, and that is reported as saturation.
 */
export const DEFAULT_MAX_CATCHUP_NS = 100e6;

interface Continuation {
  conversation: Conversation;
  turn: Turn;
  sessionNum: number;
  readyAtNs: number;
  release: () => void;
}

/** Creates the request-rate strategy; its report carries the run's pacing facts. */
export function createRequestRate(options: RequestRateOptions): LoadStrategy<RequestRateReport> {
  return {
    name: 'request_rate',
    describe: () =>
      `request rate ${options.curve?.description ?? `${options.ratePerS}/s`}${options.arrivals === undefined ? '' : ` (${options.arrivals})`}${options.concurrency === undefined ? '' : `, at most ${options.concurrency} ${options.concurrency === 1 ? 'session' : 'sessions'}`}${options.concurrencyRampNs === undefined ? '' : ` (opened over ${options.concurrencyRampNs / 1e9} s)`}`,
    run: (input) => runRequestRate(options, input),
  };
}

async function runRequestRate(options: RequestRateOptions, input: StrategyInput): Promise<RequestRateReport> {
  const { clock, signal } = input;
  const report: PacingReport = { reanchors: 0, skippedArrivals: 0, achievedRatePerS: 0 };
  const startNs = input.startAtNs ?? clock.nowNs();
  const budget = new IssueBudget(options.stop, startNs);
  const state = new RateState(options, input);
  const maxCatchupNs = options.maxCatchupNs ?? DEFAULT_MAX_CATCHUP_NS;
  const firstTickNs = startNs + (options.firstTickNs ?? 0);
  let tickNs = firstTickNs;
  let lastSentTickNs = firstTickNs;
  /** When the session cap last let a blocked tick go (a slot freed, a continuation queued or due). */
  let freedNs = Number.NEGATIVE_INFINITY;
  for (;;) {
    // A rate curve that ends at 0 req/s has no tick left.
    if (!Number.isFinite(tickNs)) break;
    if (!budget.exhausted(tickNs)) state.prepareAhead(tickNs);
    await clock.sleepUntil(tickNs, signal);
    const now = clock.nowNs();
    if (signal.aborted || budget.exhausted(now)) break;
    const scheduledNs = tickNs;
    // Lateness is the client's own: a wait the session cap imposed (until `freedNs`) is not.
    const lateNs = now - Math.max(tickNs, freedNs);
    if (lateNs > maxCatchupNs) {
      report.skippedArrivals += (lateNs / 1e9) * rampedRatePerS(options, tickNs - startNs);
      tickNs += lateNs;
      report.reanchors++;
    }
    let outcome = state.issue(now, scheduledNs, capWaitNs(options, freedNs, scheduledNs));
    while (outcome === 'blocked' && !signal.aborted) {
      freedNs = await state.waitForChange(clock, signal);
      outcome = state.issue(clock.nowNs(), scheduledNs, capWaitNs(options, freedNs, scheduledNs));
    }
    if (outcome === 'done' || outcome === 'blocked') break;
    if (outcome === 'sent') {
      budget.issued++;
      lastSentTickNs = scheduledNs;
    }
    tickNs += rampedInterval(options, tickNs - startNs);
  }
  await state.drain();
  const spanS = (lastSentTickNs - firstTickNs) / 1e9;
  report.achievedRatePerS = spanS > 0 ? (budget.issued - 1) / spanS : 0;
  return { kind: 'request_rate', startNs, issued: budget.issued, stopped: signal.aborted, pacing: report };
}

/** A new session's first turn, built before its tick (see {@link RateState.prepareAhead}). */
interface EarlySession {
  conversation: Conversation;
  sessionNum: number;
  prepared: PreparedSend;
}

/** Sessions in progress: ready continuations, in-flight sends, session slots. */
class RateState {
  private readonly ready: Continuation[] = [];
  private readonly running = new Set<Promise<void>>();
  private readonly slots: RampedSemaphore | null;
  private sessions = 0;
  private sourceDone = false;
  private readonly waiters: Array<(changedNs: number) => void> = [];
  /** In-flight requests whose session has another turn (each may queue a continuation). */
  private continuable = 0;
  /** The next new session, already prepared for the coming tick. */
  private early: EarlySession | null = null;

  constructor(
    private readonly options: RequestRateOptions,
    private readonly input: StrategyInput,
  ) {
    const rampNs = options.concurrencyRampNs;
    this.slots =
      options.concurrency === undefined
        ? null
        : new RampedSemaphore(
            options.concurrency,
            rampNs === undefined ? undefined : { clock: input.clock, rampNs },
          );
  }

  /**
   * Issues one request at a tick: a ready continuation first, else a new session. 'blocked' means
   * every session slot is taken (sleep-then-gate: the caller waits for a change and retries).
   * `capWaitNs` is the part of the send's lateness the session cap imposed (absent without a cap).
   */
  issue(nowNs: number, scheduledNs: number, capWaitNs?: number): 'sent' | 'idle' | 'done' | 'blocked' {
    const i = this.ready.findIndex((c) => c.readyAtNs <= nowNs);
    if (i >= 0) {
      const c = this.ready.splice(i, 1)[0] as Continuation;
      this.launch(c.conversation, c.turn, c.sessionNum, scheduledNs, c.release, capWaitNs);
      return 'sent';
    }
    const early = this.early;
    if (early !== null) {
      this.early = null;
      this.start(early.conversation, early.sessionNum, early.prepared, this.newSessionRelease());
      return 'sent';
    }
    if (!this.sourceDone) {
      if (this.slots !== null && !this.slots.tryAcquire()) return 'blocked';
      const conversation = this.options.source.next();
      if (conversation !== undefined) {
        const release = this.newSessionRelease();
        const first = conversation.turns[0] as Turn;
        this.launch(conversation, first, this.sessions++, scheduledNs, release, capWaitNs);
        return 'sent';
      }
      this.slots?.release();
      this.sourceDone = true;
    }
    return this.ready.length === 0 && this.running.size === 0 ? 'done' : 'idle';
  }

  /**
   * Builds the next new session's first turn for the tick at `tickNs` before sleeping until it, so
   * prompt synthesis and body serialization are not between the tick and the send. Only when that
   * tick is sure to start a new session: no session slots to wait for, no continuation queued, and
   * no request in flight that could queue one; nothing is launched between this call and the
   * tick's {@link RateState.issue}, which sends it. A session prepared for a tick that is never
   * issued (stop, interrupt) is dropped unsent.
   */
  prepareAhead(tickNs: number): void {
    if (this.early !== null || this.slots !== null || this.sourceDone) return;
    if (this.ready.length > 0 || this.continuable > 0) return;
    const conversation = this.options.source.next();
    if (conversation === undefined) {
      this.sourceDone = true;
      return;
    }
    const sessionNum = this.sessions++;
    const prepared = this.input.dispatch.prepare({
      conversation,
      turn: conversation.turns[0] as Turn,
      sessionNum,
      scheduledNs: tickNs,
    });
    this.early = { conversation, sessionNum, prepared };
  }

  /**
   * Resolves when a slot is released, a continuation is queued, or the earliest queued one is due,
   * with the monotonic ns of that change (not of when this continuation ran: that delay is the
   * client's own); with the current time when the signal aborts.
   */
  async waitForChange(clock: StrategyInput['clock'], signal: AbortSignal): Promise<number> {
    const changed = new Promise<number>((resolve) => {
      this.waiters.push(resolve);
    });
    const earliest = Math.min(...this.ready.map((c) => c.readyAtNs));
    const waits: Promise<number>[] = [changed];
    if (Number.isFinite(earliest)) waits.push(clock.sleepUntil(earliest, signal).then(() => earliest));
    if (signal.aborted) return clock.nowNs();
    // One listener per wait, removed when the wait ends: a cap that blocks every tick waits thousands of times.
    let onAbort: () => void = () => undefined;
    waits.push(
      new Promise<number>((resolve) => {
        onAbort = () => resolve(clock.nowNs());
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    );
    try {
      return await Promise.race(waits);
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  private notify(): void {
    const nowNs = this.input.clock.nowNs();
    for (const w of this.waiters.splice(0)) w(nowNs);
  }

  /** Waits for every in-flight request. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
    for (const c of this.ready.splice(0)) c.release();
    this.slots?.close();
  }

  private newSessionRelease(): () => void {
    return () => {
      this.slots?.release();
      this.notify();
    };
  }

  private launch(
    conversation: Conversation,
    turn: Turn,
    sessionNum: number,
    scheduledNs: number,
    release: () => void,
    capWaitNs: number | undefined,
  ): void {
    const prepared = this.input.dispatch.prepare({ conversation, turn, sessionNum, scheduledNs });
    this.start(conversation, sessionNum, prepared, release, turn, capWaitNs);
  }

  /**
   * Sends a prepared turn (the first one unless `turn` says otherwise), with the wait the session
   * cap imposed on it when there is a cap, and queues its continuation.
   */
  private start(
    conversation: Conversation,
    sessionNum: number,
    prepared: PreparedSend,
    release: () => void,
    turn: Turn = conversation.turns[0] as Turn,
    capWaitNs?: number,
  ): void {
    const next = conversation.turns[turn.index + 1];
    if (next !== undefined) this.continuable++;
    const p = prepared.send(undefined, capWaitNs).then(() => {
      if (next === undefined) release();
      else {
        this.continuable--;
        const readyAtNs = this.input.clock.nowNs() + (next.delayMs ?? 0) * 1e6;
        this.ready.push({ conversation, turn: next, sessionNum, readyAtNs, release });
        this.notify();
      }
      this.running.delete(p);
    });
    this.running.add(p);
  }
}

/**
 * The part of a send's lateness the session cap imposed, ns: from its scheduled time to the moment
 * the cap last let a blocked tick go (`freedNs`), 0 when that was before it; undefined without a cap.
 */
function capWaitNs(options: RequestRateOptions, freedNs: number, scheduledNs: number): number | undefined {
  return options.concurrency === undefined ? undefined : Math.max(0, freedNs - scheduledNs);
}

/** The rate asked for `elapsedNs` into the run (the nominal rate times the curve's factor), requests/s. */
function rampedRatePerS(options: RequestRateOptions, elapsedNs: number): number {
  return options.ratePerS * (options.curve?.factorAt(elapsedNs) ?? 1);
}

/**
 * The next interval, ns: one interval of the arrival process at the nominal rate, warped onto the
 * curve (the next tick comes when the curve's integral from this tick reaches it); Infinity when
 * the curve has no tick left.
 */
function rampedInterval(options: RequestRateOptions, elapsedNs: number): number {
  const base = options.intervals();
  if (options.curve === undefined) return base;
  return options.curve.warp(elapsedNs, base) - elapsedNs;
}
