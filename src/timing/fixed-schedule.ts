/**
 * Fixed-schedule replay (AIPerf `--fixed-schedule`, AIPerf's `docs/benchmark_modes/trace_replay.md`), on one absolute
 * timeline: time zero is `startNs`; a turn with trace timestamp `ts` (ms) is due at
 * `startNs + (ts − zeroMs)·1e6`. Sessions start in first-turn timestamp order; a later turn of a
 * session is due at `max(previous turn's completion, its own target)` (or previous completion +
 * `delayMs`, or at once), or closed loop at the previous completion + the recorded gap, with long
 * gaps capped ({@link SessionPacing}), so a session never has two requests in flight. Late requests go out at
 * once and are never dropped; their lateness is recorded as schedule lag.
 *
 * A Bailian tree replay (dataset/bailian-links.ts) adds branch sessions: a branch's first turn is due
 * at `max(its own target, its parent request's completion)` ({@link branchStartTarget}); it is not
 * sent when its parent never was (the run stopped first). Its requests are recorded under the tree's
 * root id and its root's session number (which picks the server), `turn_index` its rows' depths.
 *
 * The trace is read while it is replayed ({@link ScheduleFeed}): rows are pulled only up to
 * `readAheadNs` ahead of the schedule, so a million-row file starts sending at once and memory holds
 * only the rows near "now" plus one small entry per session seen. A row the feed cannot read (a bad
 * line) ends reading there; the rows read before it (up to `readAheadNs` of schedule) are still
 * sent on their schedule, and the report carries the error. Without a feed the conversations loaded
 * whole are replayed the same way.
 */
import type { BranchStart, Conversation, StreamedTurn, Turn } from '../dataset/types.js';
import { BuildAhead } from './build-ahead.js';
import type { Clock } from './clock.js';
import { feedFromConversations, ScheduleError } from './schedule-feed.js';
import { Semaphore } from './semaphore.js';
import { type SessionPace, SessionPacing, type SessionPacingOptions } from './session-pacing.js';
import type { StopConditions } from './session-source.js';
import { StartQueue } from './start-queue.js';
import type {
  DispatchItem,
  FixedScheduleReport,
  LoadStrategy,
  NextDue,
  PreparedSend,
  ReplayProgress,
  StrategyInput,
} from './types.js';

export { earliestFirstTurnMs, ScheduleError } from './schedule-feed.js';

/** Options of the fixed schedule. */
export interface FixedScheduleOptions {
  /**
   * Trace ms mapped to the start of the run, same unit as `Turn.timestampMs`; `'auto'` = the
   * earliest first-turn timestamp among the rows read before the start (AIPerf auto-offset); a
   * function is asked when the replay starts (a shard: the earliest start of the whole trace,
   * dataset/shard.ts), `'auto'` when it answers undefined.
   */
  zeroMs: ScheduleZero;
  /**
   * Optional session-slot ceiling (AIPerf `--concurrency` with a fixed schedule). A slot is held
   * until a session's last turn completes, so it needs a feed that marks `lastOfSession`.
   */
  concurrency?: number;
  /** How far ahead of their send time first turns are built, ns (default {@link DEFAULT_LOOKAHEAD_NS}). */
  lookaheadNs?: number;
  /** Most first turns built ahead and not yet sent (default {@link DEFAULT_MAX_PREPARED_AHEAD}). */
  maxPreparedAhead?: number;
  /** How far ahead of the schedule the feed is read, ns (default 2 s; at least `lookaheadNs`). */
  readAheadNs?: number;
  /** The rows to replay; default: `StrategyInput.conversations`, loaded whole. Iterated once. */
  feed?: AsyncIterable<StreamedTurn>;
  /**
   * When to stop issuing before the rows end (`--request-count`, `--benchmark-duration`, AIPerf's
   * stop conditions of a fixed schedule): nothing is sent once reached; what is in flight finishes.
   */
  stop?: StopConditions;
  /** How later turns are paced: open loop (default) or closed, and the idle-gap cap ({@link SessionPacing}). */
  pacing?: SessionPacingOptions;
}

/**
 * Default prepare-ahead window: 1 s, so a burst of long prompts (Mooncake rows share millisecond
 * timestamps; up to 28 prompts of up to 123k tokens on one tick) is built before it is due.
 */
export const DEFAULT_LOOKAHEAD_NS = 1e9;

/**
 * Default cap on requests built ahead and not yet sent: 64. At 1,000 requests/s a full 1 s window
 * held ~1,000 built bodies, each living through a garbage collection or two and being copied to the
 * old generation (1.6 vs 1.1 MB promoted per scavenge, pauses 3.9 vs 3.4 ms, with a 100 ms window);
 * 64 covers the largest bursts of the public traces.
 */
export const DEFAULT_MAX_PREPARED_AHEAD = 64;

/** Default read-ahead window: 2 s. */
export const DEFAULT_READ_AHEAD_NS = 2e9;

/** Time zero of a replay: trace ms, `'auto'`, or asked when the replay starts ({@link FixedScheduleOptions.zeroMs}). */
export type ScheduleZero = number | 'auto' | (() => number | undefined);

/** Creates the fixed-schedule strategy; its report says what the replay read and how it ended. */
export function createFixedSchedule(options: FixedScheduleOptions): LoadStrategy<FixedScheduleReport> {
  let current: Replay | null = null;
  return {
    name: 'fixed_schedule',
    describe: () =>
      `fixed schedule (zero at trace ${zeroText(options.zeroMs)}${options.concurrency === undefined ? '' : `, at most ${options.concurrency} ${options.concurrency === 1 ? 'session' : 'sessions'}`}${options.feed === undefined ? '' : ', trace streamed'}${new SessionPacing(options.pacing).describe()})`,
    replayProgress: () => current?.progress() ?? null,
    run: (input) => {
      current = new Replay(options, input);
      return current.run();
    },
  };
}

/** A turn slot of a session that was sent and no longer needed (keeps `turns.length` right). */
const RELEASED_TURN: Turn = Object.freeze({
  index: -1,
  prompt: Object.freeze({ kind: 'text', text: '' }),
  source: Object.freeze({ file: '', line: 0 }),
}) as Turn;

interface Session {
  conversation: Conversation;
  /** Its records' `session_num`: the tree's (its root session's) for a branch of a tree replay. */
  sessionNum: number;
  /** Order of creation (ties of the start queue). */
  seq: number;
  /** Index in `conversation.turns` of the next turn to send. */
  next: number;
  /** Sort keys of the turns from `next` on (parallel to `conversation.turns`). */
  orders: number[];
  /** A turn is scheduled or in flight. */
  busy: boolean;
  /** The first turn has been dispatched. */
  started: boolean;
  /** The feed said no more turns will join. */
  ended: boolean;
  /** Monotonic ns the previous turn completed. */
  lastEndNs: number;
  /** The previous row's timestamp and the time the idle-gap cap removed (session-pacing.ts). */
  pace: SessionPace;
  /** First turn built ahead of its send time. */
  prepared: PreparedSend | null;
  /** With a session cap: how much of the first turn's lateness the cap imposed, ns (its `concurrency_wait`). */
  capWaitNs?: number;
  /** `turn_index` of the first turn: its depth in a tree replay, else 0. */
  depth: number;
  /** A tree replay: its requests' completions are kept by line, for branches to wait on. */
  inTree: boolean;
}

class Replay {
  private readonly clock: Clock;
  private readonly signal: AbortSignal;
  /** Wakes the dispatcher when a start is queued before the one it is waiting for. */
  private headMoved: (() => void) | null = null;
  private readonly lookaheadNs: number;
  private readonly maxPreparedAhead: number;
  /** First turns built ahead and not yet sent. */
  private preparedAhead = 0;
  private readonly readAheadNs: number;
  private readonly sessions = new Map<string, Session>();
  private readonly starts = new StartQueue<Session>();
  private readonly slots: Semaphore | null;
  /** When a session slot last freed for a start that waited for one (−∞: none waited yet). */
  private freedNs = Number.NEGATIVE_INFINITY;
  private readonly stop: StopConditions;
  private zeroMs = 0;
  private startNs = 0;
  private primed = false;
  private feedDone = false;
  private feedError: unknown = null;
  private wake: (() => void) | null = null;
  private rowsRead = 0;
  private issued = 0;
  private lastStartTsMs = Number.NEGATIVE_INFINITY;
  /** Latest first-turn timestamp read so far. */
  private maxReadTsMs = Number.NEGATIVE_INFINITY;
  private outOfOrder = 0;
  private active = 0;
  private idle: (() => void) | null = null;
  private readonly builder: BuildAhead<Session>;
  /** Later turns sleeping until their time: due ns → trace ms, per turn (for {@link Replay.progress}). */
  private readonly waitingTurns = new Map<object, { dueNs: number; traceMs: number }>();
  private readonly pacing: SessionPacing;
  /** Tree replay: when each request of a tree completed (monotonic ns), by its 1-based file line. */
  private readonly endsByLine = new Map<number, number>();
  /**
   * Tree replay with the idle-gap cap in open loop: the time the cap had removed from a session when
   * its request of this line was scheduled (absent: none), which its branches carry on from.
   */
  private readonly shiftsByLine = new Map<number, number>();
  /** Tree replay: branches waiting for their parent request, by its line (null: it was never sent). */
  private readonly parentWaiters = new Map<number, Array<(endNs: number | null) => void>>();
  /** Sessions numbered so far: every session but a tree's branches, which take their root's number. */
  private numbered = 0;

  constructor(
    private readonly options: FixedScheduleOptions,
    private readonly input: StrategyInput,
  ) {
    this.clock = input.clock;
    this.signal = input.signal;
    this.lookaheadNs = options.lookaheadNs ?? DEFAULT_LOOKAHEAD_NS;
    this.maxPreparedAhead = options.maxPreparedAhead ?? DEFAULT_MAX_PREPARED_AHEAD;
    this.readAheadNs = Math.max(options.readAheadNs ?? DEFAULT_READ_AHEAD_NS, this.lookaheadNs);
    this.slots = options.concurrency === undefined ? null : new Semaphore(options.concurrency);
    this.stop = options.stop ?? {};
    this.builder = new BuildAhead(input.dispatch, input.clock);
    this.pacing = new SessionPacing(options.pacing);
  }

  async run(): Promise<FixedScheduleReport> {
    const feed = this.options.feed ?? feedFromConversations(this.input.conversations);
    const reading = this.read(feed);
    await this.untilPrimed();
    await this.dispatchStarts();
    await reading;
    if (this.halted()) this.releaseBranches();
    await this.untilIdle();
    return {
      kind: 'fixed_schedule',
      startNs: this.startNs,
      issued: this.issued,
      stopped: this.signal.aborted,
      replay: {
        zeroMs: this.zeroMs,
        rowsRead: this.rowsRead,
        sessions: this.sessions.size,
        branchSessions: this.sessions.size - this.numbered,
        outOfOrderSessions: this.outOfOrder,
        feedError: this.feedError,
        pacing: this.pacing.facts(),
      },
    };
  }

  /** Rows read and sessions seen so far, and when the next request is due. */
  progress(): ReplayProgress {
    return { rowsRead: this.rowsRead, sessions: this.sessions.size, nextDue: this.nextDue() };
  }

  /** The earliest of the next session start and the later turns waiting; null before the start or when none. */
  private nextDue(): NextDue | null {
    if (!this.primed || this.halted()) return null;
    const head = this.starts.peek();
    let best = head === undefined ? null : { dueNs: this.targetNs(head.tsMs), traceMs: head.tsMs };
    for (const turn of this.waitingTurns.values()) if (best === null || turn.dueNs < best.dueNs) best = turn;
    return best === null ? null : { inNs: best.dueNs - this.clock.nowNs(), traceMs: best.traceMs };
  }

  private targetNs(tsMs: number): number {
    return this.startNs + (tsMs - this.zeroMs) * 1e6;
  }

  // ---- reading --------------------------------------------------------------------------------

  private async read(feed: AsyncIterable<StreamedTurn>): Promise<void> {
    let firstTsMs: number | undefined;
    try {
      for await (const row of feed) {
        if (this.halted()) break;
        const startedSession = this.accept(row);
        if (startedSession === undefined) continue;
        firstTsMs ??= startedSession;
        if (!this.primed) {
          if (startedSession - firstTsMs < this.readAheadNs / 1e6) continue;
          this.prime();
        }
        const aheadNs = this.targetNs(startedSession) - this.readAheadNs;
        if (aheadNs > this.clock.nowNs())
          await this.clock.sleepUntil(Math.min(aheadNs, this.stopNs()), this.signal);
      }
    } catch (err) {
      this.feedError = err;
    } finally {
      this.feedDone = true;
      this.prime();
      this.notify();
    }
  }

  /** Takes one row; returns the first-turn timestamp when it started a new session. */
  private accept(row: StreamedTurn): number | undefined {
    this.rowsRead++;
    const known = this.sessions.get(row.sessionId);
    if (known !== undefined) {
      this.append(known, row);
      if (known.started && !known.busy) this.sendNext(known);
      return undefined;
    }
    const tsMs = row.turn.timestampMs;
    if (tsMs === undefined) throw missingTimestamp(row);
    const session: Session = {
      conversation: conversationOf(row),
      sessionNum: this.sessionNumOf(row),
      seq: this.sessions.size,
      next: 0,
      orders: [],
      busy: false,
      started: false,
      ended: false,
      lastEndNs: 0,
      pace: SessionPacing.start(tsMs),
      prepared: null,
      depth: row.branch?.depth ?? 0,
      inTree: row.treeId !== undefined,
    };
    this.sessions.set(row.sessionId, session);
    this.append(session, row);
    // Out of order: an earlier-timestamped start read after a later one, so late (its due time had
    // passed, or a later session had already started): reading waited on the later row.
    if (
      this.primed &&
      tsMs < this.maxReadTsMs &&
      (tsMs < this.lastStartTsMs || this.targetNs(tsMs) < this.clock.nowNs())
    )
      this.outOfOrder++;
    this.maxReadTsMs = Math.max(this.maxReadTsMs, tsMs);
    const head = this.starts.peek();
    this.starts.push({ tsMs, seq: session.seq, session });
    if (head !== undefined && this.starts.peek() !== head) this.headMoved?.();
    this.notify();
    return tsMs;
  }

  /**
   * A new session's number: its root's for a branch of a tree (so the tree's requests share
   * `session_num` and, with several servers, the server), else the next one.
   */
  private sessionNumOf(row: StreamedTurn): number {
    const root = row.branch === undefined ? undefined : this.sessions.get(row.treeId ?? row.sessionId);
    return root?.sessionNum ?? this.numbered++;
  }

  /** Adds a turn among the unsent ones by its sort key (ties after equal keys) and re-indexes them. */
  private append(session: Session, row: StreamedTurn): void {
    const turns = session.conversation.turns;
    // The first row of a session stays first: its start is already queued by its timestamp.
    const floor = Math.max(session.next, Math.min(1, turns.length));
    let at = turns.length;
    while (at > floor && (session.orders[at - 1] as number) > row.order) at--;
    turns.splice(at, 0, row.turn);
    session.orders.splice(at, 0, row.order);
    for (let k = at; k < turns.length; k++) (turns[k] as Turn).index = session.depth + k;
    if (row.lastOfSession) session.ended = true;
  }

  /**
   * Fixes time zero (the earliest start read so far, with auto-offset), once the opening starts are
   * built, and lets sending begin.
   */
  private prime(): void {
    if (this.primed) return;
    this.primed = true;
    const zero = this.options.zeroMs;
    const asked = typeof zero === 'function' ? (zero() ?? 'auto') : zero;
    this.zeroMs = asked === 'auto' ? (this.starts.peek()?.tsMs ?? 0) : asked;
    // Provisional without --start-at: each opening start is sent with its final time.
    this.startNs = this.input.startAtNs ?? this.clock.nowNs();
    this.prepareOpening();
    this.startNs = this.input.startAtNs ?? this.clock.nowNs();
    this.notify();
  }

  /**
   * Builds the starts of the first look-ahead window (at most `maxPreparedAhead`) before time zero
   * is fixed: nothing runs before them to leave time for it, so built at their send time an opening
   * burst (a first tick of long prompts) would go out late. Time zero then moves by their build
   * time; each is sent with its scheduled time on the final timeline.
   */
  private prepareOpening(): void {
    if (this.halted()) return;
    const endMs = this.zeroMs + this.lookaheadNs / 1e6;
    for (;;) {
      const entry = this.starts.peekToPrepare();
      if (entry === undefined || entry.tsMs >= endMs || this.preparedAhead >= this.maxPreparedAhead) break;
      this.starts.nextToPrepare();
      this.preparedAhead++;
      const session = entry.session;
      session.prepared = this.input.dispatch.prepare(this.itemOf(session, 0, this.targetNs(entry.tsMs)));
    }
    this.input.dispatch.reserveConnections?.(this.preparedAhead, this.clock.nowNs());
  }

  /**
   * True once issuing must stop: the run was stopped. A feed that failed (a bad trace row) only
   * stops reading: the rows read before it are still sent on their schedule.
   */
  private halted(): boolean {
    if (this.signal.aborted) return true;
    const { requestCount } = this.stop;
    return (requestCount !== undefined && this.issued >= requestCount) || this.clock.nowNs() >= this.stopNs();
  }

  /** Monotonic ns at which `--benchmark-duration` ends issuing; +∞ without one or before the start. */
  private stopNs(): number {
    const { durationNs } = this.stop;
    return durationNs === undefined || !this.primed ? Number.POSITIVE_INFINITY : this.startNs + durationNs;
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private waitForFeed(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  private async untilPrimed(): Promise<void> {
    while (!this.primed) await this.waitForFeed();
  }

  // ---- session starts -------------------------------------------------------------------------

  private async dispatchStarts(): Promise<void> {
    for (;;) {
      if (this.halted()) return;
      const head = this.starts.peek();
      if (head === undefined) {
        if (this.feedDone) return;
        await this.waitForFeed();
        continue;
      }
      const dueNs = this.targetNs(head.tsMs);
      await this.prepareAhead(dueNs);
      // Wake early when a start enters the look-ahead window before the head is due (a gap longer
      // than the window): it is built then, not at its send time.
      const wakeNs = Math.min(dueNs, this.nextBuildAtNs());
      if (!(await this.sleepUntilDue(wakeNs)) || wakeNs < dueNs) continue;
      if (this.slots !== null && !this.slots.tryAcquire()) {
        await this.slots.acquire();
        this.freedNs = this.clock.nowNs();
      }
      if (this.halted()) {
        this.slots?.release();
        return;
      }
      const entry = this.starts.shift();
      if (entry === undefined) continue;
      this.lastStartTsMs = Math.max(this.lastStartTsMs, entry.tsMs);
      entry.session.started = true;
      // A start behind one that waited for a slot is delayed by that wait too (starts go in order).
      if (this.slots !== null) entry.session.capWaitNs = Math.max(0, this.freedNs - dueNs);
      this.sendNext(entry.session);
    }
  }

  /**
   * Waits for `dueNs`; returns false when woken early because an earlier start was queued (the
   * caller then looks at the new head). The early wake is a promise race, not an abort signal: a
   * signal per wait would leave a listener on the run's signal per session (O(n²) adds).
   */
  private async sleepUntilDue(dueNs: number): Promise<boolean> {
    if (dueNs <= this.clock.nowNs()) return true;
    // Past the duration nothing more is sent: wake then, to stop, rather than at the start's time.
    if (dueNs > this.stopNs()) {
      await this.clock.sleepUntil(this.stopNs(), this.signal);
      return false;
    }
    let moved = false;
    const headMoved = new Promise<void>((resolve) => {
      this.headMoved = () => {
        moved = true;
        resolve();
      };
    });
    await Promise.race([this.clock.sleepUntil(dueNs, this.signal), headMoved]);
    this.headMoved = null;
    return !moved || this.signal.aborted;
  }

  /**
   * Builds first turns due within the look-ahead window, in steps, while fewer than
   * `maxPreparedAhead` are waiting and the next step fits before the next send (build-ahead.ts).
   * After each build the client is asked to have a connection ready for every built request, so a
   * burst does not wait for handshakes.
   */
  private async prepareAhead(nextDueNs: number): Promise<void> {
    for (;;) {
      if (!this.builder.busy && !this.beginNextBuild()) return;
      const built = await this.builder.advance(nextDueNs);
      if (built === null) return;
      built.key.prepared = built.prepared;
      this.input.dispatch.reserveConnections?.(this.preparedAhead, nextDueNs);
    }
  }

  /**
   * When the look-ahead can next begin a build: the next unbuilt start's send time minus the window;
   * +∞ while a build is in progress (it goes on after the next send) or the cap is reached.
   */
  private nextBuildAtNs(): number {
    if (this.builder.busy || this.preparedAhead >= this.maxPreparedAhead) return Number.POSITIVE_INFINITY;
    const entry = this.starts.peekToPrepare();
    return entry === undefined ? Number.POSITIVE_INFINITY : this.targetNs(entry.tsMs) - this.lookaheadNs;
  }

  /** Starts building the next first turn to build ahead, if one is due within the window. */
  private beginNextBuild(): boolean {
    if (this.preparedAhead >= this.maxPreparedAhead) return false;
    const entry = this.starts.peekToPrepare();
    if (entry === undefined) return false;
    const scheduledNs = this.targetNs(entry.tsMs);
    if (scheduledNs > this.clock.nowNs() + this.lookaheadNs) return false;
    this.starts.nextToPrepare();
    this.preparedAhead++;
    this.builder.begin(entry.session, this.itemOf(entry.session, 0, scheduledNs));
    return true;
  }

  private itemOf(session: Session, k: number, scheduledNs: number): DispatchItem {
    const turn = session.conversation.turns[k] as Turn;
    return { conversation: session.conversation, turn, sessionNum: session.sessionNum, scheduledNs };
  }

  // ---- turns of a session ---------------------------------------------------------------------

  /** Sends the session's next turn if it has one; ends the session if it is known to be over. */
  private sendNext(session: Session): void {
    const turns = session.conversation.turns;
    if (session.next >= turns.length) {
      if (session.ended) this.slots?.release();
      return;
    }
    session.busy = true;
    this.active++;
    void this.runTurn(session).finally(() => {
      this.active--;
      if (this.active === 0) this.idle?.();
    });
  }

  private async runTurn(session: Session): Promise<void> {
    const k = session.next;
    const turn = session.conversation.turns[k] as Turn;
    if (k === 0) session.prepared ??= this.builder.finish(session);
    let prepared = k === 0 ? session.prepared : null;
    if (session.prepared !== null) this.preparedAhead--;
    session.prepared = null;
    const branch = k === 0 ? session.conversation.branch : undefined;
    const parentEndNs = branch === undefined ? 0 : await this.parentEnd(branch.parentLine);
    if (parentEndNs === null) return this.stopSession(session);
    const scheduledNs =
      branch !== undefined
        ? this.branchStartTarget(session, turn, branch, parentEndNs)
        : k === 0
          ? this.targetNs(turn.timestampMs as number)
          : this.pacing.laterTurnTarget(turn, session.pace, session.lastEndNs, this.clock.nowNs(), (ts) =>
              this.targetNs(ts),
            );
    if (session.inTree && session.pace.shiftMs > 0)
      this.shiftsByLine.set(turn.source.line, session.pace.shiftMs);
    prepared ??= this.input.dispatch.prepare(this.itemOf(session, k, scheduledNs));
    if (k > 0 || branch !== undefined) {
      const traceMs = this.zeroMs + (scheduledNs - this.startNs) / 1e6;
      this.waitingTurns.set(turn, { dueNs: scheduledNs, traceMs });
      try {
        // Woken by the end of --benchmark-duration before its time, the turn is not sent.
        await this.clock.sleepUntil(Math.min(scheduledNs, this.stopNs()), this.signal);
        if (!this.halted()) await this.clock.sleepUntil(scheduledNs, this.signal);
      } finally {
        this.waitingTurns.delete(turn);
      }
    }
    if (this.halted()) return this.stopSession(session);
    session.next = k + 1;
    session.orders[k] = Number.NEGATIVE_INFINITY;
    this.issued++;
    // Later turns hold their session's slot: the cap never delays them.
    await prepared.send(scheduledNs, k === 0 ? session.capWaitNs : this.slots === null ? undefined : 0);
    session.conversation.turns[k] = RELEASED_TURN;
    session.lastEndNs = this.clock.nowNs();
    if (session.inTree) this.requestEnded(turn.source.line, session.lastEndNs);
    session.busy = false;
    if (this.halted()) return this.stopSession(session);
    this.sendNext(session);
  }

  /**
   * Target of a branch's first turn (a Bailian tree replay), paced from its parent request as a later
   * turn of the parent's session is ({@link SessionPacing}): open loop its own timestamp's target
   * (shifted by what the idle-gap cap had removed from the parent's session), closed loop the parent's
   * completion + the recorded gap; never before its parent completed (`parentEndNs`: a parent that
   * failed or was cancelled counts as completed), never before now.
   */
  private branchStartTarget(session: Session, turn: Turn, branch: BranchStart, parentEndNs: number): number {
    session.pace = {
      prevTsMs: branch.parentTimestampMs,
      shiftMs: this.shiftsByLine.get(branch.parentLine) ?? 0,
    };
    const paced = this.pacing.laterTurnTarget(turn, session.pace, parentEndNs, this.clock.nowNs(), (ts) =>
      this.targetNs(ts),
    );
    return Math.max(paced, parentEndNs);
  }

  private stopSession(session: Session): void {
    session.busy = false;
    if (session.started) this.slots?.release();
    if (!session.inTree) return;
    // Its unsent turns never go: branches waiting for one of them are not sent either.
    const turns = session.conversation.turns;
    for (let k = session.next; k < turns.length; k++) this.requestEnded((turns[k] as Turn).source.line, null);
  }

  // ---- branches of a tree replay --------------------------------------------------------------

  /**
   * When the request of line `parentLine` completed (monotonic ns), waiting for it if it has not
   * yet; null when it will never be sent (the run stopped first).
   */
  private parentEnd(parentLine: number): Promise<number | null> {
    const endNs = this.endsByLine.get(parentLine);
    if (endNs !== undefined || this.halted()) return Promise.resolve(endNs ?? null);
    return new Promise((resolve) => {
      const waiting = this.parentWaiters.get(parentLine);
      if (waiting === undefined) this.parentWaiters.set(parentLine, [resolve]);
      else waiting.push(resolve);
    });
  }

  /** A tree's request of line `line` completed at `endNs` (null: it will never be sent). */
  private requestEnded(line: number, endNs: number | null): void {
    if (endNs !== null) this.endsByLine.set(line, endNs);
    const waiting = this.parentWaiters.get(line);
    if (waiting === undefined) return;
    this.parentWaiters.delete(line);
    for (const resolve of waiting) resolve(endNs);
  }

  /** The run stopped: every branch still waiting for its parent is not sent. */
  private releaseBranches(): void {
    for (const line of [...this.parentWaiters.keys()]) this.requestEnded(line, null);
  }

  private untilIdle(): Promise<void> {
    if (this.active === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idle = resolve;
    });
  }
}

function zeroText(zero: ScheduleZero): string {
  if (zero === 'auto') return 'first timestamp';
  return typeof zero === 'function' ? 'first timestamp of the whole trace' : `${zero} ms`;
}

/** A replayed session's conversation: its id, its tree's id and its branch start when it has them. */
function conversationOf(row: StreamedTurn): Conversation {
  const conversation: Conversation = { id: row.sessionId, turns: [], contextMode: row.contextMode };
  if (row.treeId !== undefined) conversation.treeId = row.treeId;
  if (row.branch !== undefined) conversation.branch = row.branch;
  return conversation;
}

function missingTimestamp(row: StreamedTurn): ScheduleError {
  const { file, line } = row.turn.source;
  return new ScheduleError(
    `--fixed-schedule: session ${row.sessionId} has no timestamp on its first turn (${file}:${line})`,
  );
}
