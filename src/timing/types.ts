/**
 * Load strategies decide WHEN each turn is sent; they never touch sockets. One file per strategy,
 * chosen from the typed registry in `timing/registry.ts`.
 */
import type { Conversation, Turn } from '../dataset/types.js';
import type { Clock } from './clock.js';
import type { PacingFacts } from './session-pacing.js';

/** One turn handed to the sender. */
export interface DispatchItem {
  conversation: Conversation;
  turn: Turn;
  /** 0-based index of the conversation in dispatch order (AIPerf `session_num`). */
  sessionNum: number;
  /** Monotonic ns the schedule intended this send for; null when the strategy has no schedule. */
  scheduledNs: number | null;
}

/** A request built ahead of its send time (prompt synthesized, body serialized). */
export interface PreparedSend {
  /**
   * Sends it; resolves when its response has completed or failed (never rejects). `scheduledNs`,
   * when given, is its scheduled send time in place of the one it was prepared with (a strategy
   * that builds requests before it fixes its time zero). `concurrencyWaitNs`, given by a strategy
   * with a session cap and a schedule, is how much of the send's lateness the cap imposed (the
   * record's `concurrency_wait`); absent: no cap.
   */
  send(scheduledNs?: number, concurrencyWaitNs?: number): Promise<void>;
}

/**
 * The sender, in two steps so that building a large prompt never delays a send: strategies call
 * `prepare` before waiting for the target time and `send` when it is due.
 */
export interface Dispatch {
  prepare(item: DispatchItem): PreparedSend;
  /**
   * Optional: the build `prepare` does, in steps of bounded work (a long synthesized prompt's new
   * text a few thousand tokens per step), so a strategy can build between sends and stop when one
   * is due. Each `next()` runs one step; the last returns the request.
   */
  prepareInSteps?(item: DispatchItem): Iterator<void, PreparedSend, void>;
  /**
   * Optional: the strategy holds `count` requests built ahead and not yet sent, the earliest due at
   * `dueNs` (the clock's ns; now when absent); the client opens connections for those that no free
   * connection covers just before `dueNs`, so they go out without a handshake.
   */
  reserveConnections?(count: number, dueNs?: number): void;
}

/** What every strategy receives. */
export interface StrategyInput {
  conversations: readonly Conversation[];
  clock: Clock;
  dispatch: Dispatch;
  /** Aborting stops issuing new requests (in-flight ones are the caller's business). */
  signal: AbortSignal;
  /**
   * Monotonic ns of the schedule's time zero when it is fixed in advance (`--start-at`): the
   * strategy waits for it (a replay builds its opening requests first) and its report's `startNs`
   * is it, late or not. Absent: time zero is when the strategy starts.
   */
  startAtNs?: number;
}

/** What every strategy reports when it has issued everything and all its dispatches have settled. */
export interface StrategyReportBase {
  /** Monotonic ns of the schedule's time zero. */
  startNs: number;
  /** Requests issued. */
  issued: number;
  /** True when the signal stopped issuing early. */
  stopped: boolean;
}

/** What a fixed-schedule replay read and how it ended. */
export interface ReplayReport {
  /** Trace ms used as time zero. */
  zeroMs: number;
  /** Rows replayed (turns read from the feed inside the window). */
  rowsRead: number;
  /** Sessions seen. */
  sessions: number;
  /** Of `sessions`, the branch sessions of a Bailian tree replay (sibling follow-ups); 0 otherwise. */
  branchSessions: number;
  /**
   * Sessions whose first row came after a later-timestamped one in the file (a trace not in
   * timestamp order) and was read only after its due time, or after a later session had started:
   * they were sent as soon as read, late.
   */
  outOfOrderSessions: number;
  /**
   * The error that ended reading the feed early (a bad row), or null. Reading stopped there; the
   * rows read before it were still sent on their schedule (`rowsRead` counts them).
   */
  feedError: unknown;
  /** Open or closed loop, and what the idle-gap cap changed (session-pacing.ts). */
  pacing: PacingFacts;
}

/** Pacing facts of a request-rate run. */
export interface PacingReport {
  /** Times the schedule fell more than the catch-up bound behind and re-anchored to now. */
  reanchors: number;
  /**
   * Arrivals the re-anchors skipped: the time each one jumped over × the rate asked for then (the
   * expected count, also for Poisson and gamma arrivals). Offered load the run did not send.
   */
  skippedArrivals: number;
  /** Requests issued per second between the first and last tick (0 with fewer than two ticks). */
  achievedRatePerS: number;
}

/** Report of the fixed-schedule strategy. */
export interface FixedScheduleReport extends StrategyReportBase {
  kind: 'fixed_schedule';
  replay: ReplayReport;
}

/** Report of the request-rate strategy. */
export interface RequestRateReport extends StrategyReportBase {
  kind: 'request_rate';
  pacing: PacingReport;
}

/** Report of the closed-loop concurrency strategy. */
export interface ConcurrencyReport extends StrategyReportBase {
  kind: 'concurrency';
}

/** Report of the user-centric strategy (`--user-centric-rate`, `--num-users`). */
export interface UserCentricReport extends StrategyReportBase {
  kind: 'user_centric';
  users: {
    /** Users of the opening steady state (those with turns left, plus the fresh one who sent first). */
    opening: number;
    /** Users started in all (each ran one session, or the part of it its virtual history left). */
    started: number;
    /** Seconds between two turns of one user: `--num-users / --user-centric-rate`. */
    turnGapS: number;
  };
}

/** What a strategy's run resolves with; `kind` is the strategy's name and says which facts it adds. */
export type StrategyReport = FixedScheduleReport | RequestRateReport | ConcurrencyReport | UserCentricReport;

/** A strategy name, as used in run folder names and logs. */
export type StrategyName = StrategyReport['kind'];

/** What a replay has read so far, for the live progress line (counts, as {@link ReplayReport}'s). */
export interface ReplayProgress {
  /** Rows read from the feed inside the window. */
  rowsRead: number;
  /** Sessions seen. */
  sessions: number;
  /**
   * The next request the replay will send (the earliest of the next session start and the later
   * turns waiting for their time); null when none is known (all sent, or not started).
   */
  nextDue?: NextDue | null;
}

/** When a replay's next request is due. */
export interface NextDue {
  /** Due in this many ns from when it was read (≤ 0: due now). */
  inNs: number;
  /** Its timestamp in the trace, ms (after `--synthesis-speedup-ratio`). */
  traceMs: number;
}

/** A load strategy whose run resolves with a report of type `R`. */
export interface LoadStrategy<R extends StrategyReport = StrategyReport> {
  /** The strategy's registry name; its report's `kind`. */
  readonly name: R['kind'];
  /** One-line description for logs and the console footer. */
  describe(): string;
  /**
   * Optional (a fixed schedule): rows read and sessions seen so far by the run in progress, or by
   * the last run once it ended; null before a run started.
   */
  replayProgress?(): ReplayProgress | null;
  /** Issues the load; resolves when everything issued has settled. Never rejects for request failures. */
  run(input: StrategyInput): Promise<R>;
}
