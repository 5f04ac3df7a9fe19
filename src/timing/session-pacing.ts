/**
 * When a later turn of a session goes out on a fixed-schedule replay: open loop on the trace's clock
 * (AIPerf's default, `--open-loop-replay`) or closed loop after each answer
 * (`--no-open-loop-replay`), with the gaps of one session capped by `--trace-idle-gap-cap-seconds`.
 *
 * - Open loop: a turn is due at its own timestamp, or at once when the previous turn ended after it
 *   (the schedule keeps the trace's arrival process; a slow server makes later turns late).
 * - Closed loop: a turn is due at the previous turn's completion plus its think time, the gap
 *   between its row's timestamp and the previous row's (both after `--synthesis-speedup-ratio`), so
 *   a session keeps its recorded pacing between answers (a slow server gets less load). A row whose
 *   previous row had no timestamp has no recorded gap and is due at its own timestamp, as in open loop.
 * - Either way a row with a `delay` and no timestamp is due at the previous completion plus the delay
 *   (not scaled by the speedup, as before), and a row with neither at once. Session first turns stay on
 *   the trace's clock (the fixed schedule's start queue).
 *
 * The idle-gap cap is applied here, in the schedule, not by rewriting timestamps when the dataset is
 * read: a whole-file load and a streamed one both reach the schedule as the same rows in the same
 * session order (the whole file through `feedFromConversations`), so one rule serves both and they
 * cannot disagree; the schedule already keeps one entry per session, where the previous row's
 * timestamp and the time removed so far belong; and `inputs.json` and the records keep the trace's
 * own timestamps. A gap longer than the cap is shortened to the cap: in open loop the session's later
 * timestamps all move earlier by the time removed (the gap is measured between the previous row's
 * timestamp and this row's, not from when the previous turn was sent or ended); in closed loop the
 * think time is the capped gap; a `delay` longer than the cap is the cap. Gaps between different
 * sessions (a quiet stretch of the whole trace) are never touched: AIPerf's
 * `--system-idle-gap-cap-seconds` for those is not built.
 */
import type { Turn } from '../dataset/types.js';

/** How later turns are paced (the fixed schedule's `pacing` option). */
export interface SessionPacingOptions {
  /** True (the default): later turns on the trace's clock; false: after each answer plus the recorded gap. */
  openLoop: boolean;
  /** `--trace-idle-gap-cap-seconds` in ms of schedule time (after the speedup); absent: no cap. Must be > 0. */
  idleGapCapMs?: number;
}

/** What the idle-gap cap changed in one replay. */
export interface IdleGapCapReport {
  /** The cap, ms of schedule time. */
  capMs: number;
  /** Rows whose gap to the previous row of their session (or whose `delay`) was longer than the cap. */
  rowsCapped: number;
  /** Schedule time removed from those gaps, ms (trace ms after `--synthesis-speedup-ratio`; a delay's own ms). */
  removedMs: number;
}

/**
 * Open loop: the later turns whose own time had passed when the previous answer of their session
 * ended, so they went at that end instead, and by how much (ms after their own time, schedule time).
 * Their `request_scheduled_ns` is that end, so `schedule_lag` counts only the client's lateness.
 */
export interface BehindAnswerFacts {
  count: number;
  meanMs: number;
  maxMs: number;
}

/** What pacing a replay used, for its report. */
export interface PacingFacts {
  /** False with `--no-open-loop-replay`. */
  openLoop: boolean;
  /** Open loop only (null in closed loop, where a turn always follows its answer). */
  behindAnswer: BehindAnswerFacts | null;
  /** Null without `--trace-idle-gap-cap-seconds`. */
  idleGapCap: IdleGapCapReport | null;
}

/** One session's pacing state: the previous row's timestamp and the time the cap removed so far. */
export interface SessionPace {
  /** Timestamp of the session's previous row (trace ms after speedup); undefined when it had none. */
  prevTsMs: number | undefined;
  /** Schedule time the cap removed from this session's gaps so far, ms (open loop shifts later rows by it). */
  shiftMs: number;
}

/** The pacing of one replay: the rule for a later turn's due time and the cap's counts. */
export class SessionPacing {
  private readonly capMs: number;
  private rowsCapped = 0;
  private removedMs = 0;
  private behindCount = 0;
  private behindSumMs = 0;
  private behindMaxMs = 0;

  constructor(private readonly options: SessionPacingOptions = { openLoop: true }) {
    this.capMs = options.idleGapCapMs ?? Number.POSITIVE_INFINITY;
  }

  /** A new session's state, from its first row's timestamp (trace ms after speedup). */
  static start(firstTsMs: number | undefined): SessionPace {
    return { prevTsMs: firstTsMs, shiftMs: 0 };
  }

  /** The words the schedule's description adds: empty for open loop without a cap. */
  describe(): string {
    const loop = this.options.openLoop
      ? ''
      : ', closed loop: each later turn after the previous answer + its gap';
    const cap = this.options.idleGapCapMs;
    return `${loop}${cap === undefined ? '' : `, gaps within a session capped at ${cap / 1000} s`}`;
  }

  /** The report's pacing facts so far. */
  facts(): PacingFacts {
    const cap = this.options.idleGapCapMs;
    const behind = {
      count: this.behindCount,
      meanMs: this.behindCount === 0 ? 0 : this.behindSumMs / this.behindCount,
      maxMs: this.behindMaxMs,
    };
    return {
      openLoop: this.options.openLoop,
      behindAnswer: this.options.openLoop ? behind : null,
      idleGapCap:
        cap === undefined ? null : { capMs: cap, rowsCapped: this.rowsCapped, removedMs: this.removedMs },
    };
  }

  /**
   * Monotonic ns a later turn is due (never before `nowNs`), updating the session's `pace`; call
   * once per later turn, in send order.
   * @param lastEndNs when the session's previous turn completed, monotonic ns.
   * @param targetNs the schedule's time of a trace timestamp (ms after speedup).
   */
  laterTurnTarget(
    turn: Turn,
    pace: SessionPace,
    lastEndNs: number,
    nowNs: number,
    targetNs: (tsMs: number) => number,
  ): number {
    const tsMs = turn.timestampMs;
    const prevTsMs = pace.prevTsMs;
    pace.prevTsMs = tsMs;
    if (tsMs !== undefined) {
      if (prevTsMs === undefined) return this.openLoopTarget(targetNs(tsMs - pace.shiftMs), nowNs);
      const gapMs = Math.max(0, tsMs - prevTsMs);
      const keptMs = this.cap(gapMs);
      if (!this.options.openLoop) return Math.max(lastEndNs + keptMs * 1e6, nowNs);
      pace.shiftMs += gapMs - keptMs;
      return this.openLoopTarget(targetNs(tsMs - pace.shiftMs), nowNs);
    }
    if (turn.delayMs !== undefined) return Math.max(lastEndNs + this.cap(turn.delayMs) * 1e6, nowNs);
    return nowNs;
  }

  /** A turn due at `ownNs` on the trace's clock: then, or now when its time passed behind the previous answer (counted). */
  private openLoopTarget(ownNs: number, nowNs: number): number {
    if (ownNs >= nowNs) return ownNs;
    const behindMs = (nowNs - ownNs) / 1e6;
    this.behindCount++;
    this.behindSumMs += behindMs;
    if (behindMs > this.behindMaxMs) this.behindMaxMs = behindMs;
    return nowNs;
  }

  /** `gapMs` shortened to the cap, counted when it was longer. */
  private cap(gapMs: number): number {
    if (gapMs <= this.capMs) return gapMs;
    this.rowsCapped++;
    this.removedMs += gapMs - this.capMs;
    return this.capMs;
  }
}

/**
 * The console line of what `--trace-idle-gap-cap-seconds` changed, e.g. `idle-gap cap 0.1 s: 1 row's
 * gap shortened, 2.9 s of schedule time removed`; null without the cap.
 */
export function idleGapCapLine(facts: PacingFacts): string | null {
  const cap = facts.idleGapCap;
  if (cap === null) return null;
  const rows = `${cap.rowsCapped} ${cap.rowsCapped === 1 ? 'row: its gap' : 'rows: their gaps'}`;
  return `idle-gap cap ${cap.capMs / 1000} s (--trace-idle-gap-cap-seconds): ${rows} to the previous request of the session shortened, ${(cap.removedMs / 1000).toFixed(3)} s of schedule time removed`;
}

/**
 * The console line of an open-loop replay's later turns that went behind their previous answer, e.g.
 * `open loop: 14 later turns went when the previous answer of their session ended, after their own
 * time (mean 120.4 ms, max 410.2 ms behind the trace)`; null when none did (or closed loop).
 */
export function behindAnswerLine(facts: PacingFacts): string | null {
  const b = facts.behindAnswer;
  if (b === null || b.count === 0) return null;
  const turns = b.count === 1 ? '1 later turn' : `${b.count} later turns`;
  return `open loop: ${turns} went when the previous answer of their session ended, after their own time (mean ${b.meanMs.toFixed(1)} ms, max ${b.maxMs.toFixed(1)} ms behind the trace; replay.turns_behind_answer)`;
}
