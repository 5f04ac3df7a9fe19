/**
 * Fixed-schedule replay (AIPerf `--fixed-schedule`, aiperf-semantics §1.6), on one absolute
 * timeline: time zero is `startNs`; a turn with trace timestamp `ts` (ms) is due at
 * `startNs + (ts − zeroMs)·1e6`. First turns are released in timestamp order by a single timer
 * chain; a later turn of a conversation is due at `max(previous turn's completion, its own target)`
 * (or previous completion + `delayMs`, or at once), so a session never has two requests in flight.
 * Late requests go out at once and are never dropped; their lateness is recorded as schedule lag.
 */
import type { Conversation, Turn } from '../dataset/types.js';
import { PrepareAhead } from './prepare-ahead.js';
import { Semaphore } from './semaphore.js';
import type { LoadStrategy, PreparedSend, StrategyInput, StrategyResult } from './types.js';

/** Options of the fixed schedule. */
export interface FixedScheduleOptions {
  /**
   * Trace ms mapped to the start of the run. With auto-offset it is the earliest first-turn
   * timestamp; otherwise the start offset (0 if none). Same unit as `Turn.timestampMs`.
   */
  zeroMs: number;
  /** Optional session-slot ceiling (AIPerf `--concurrency` with a fixed schedule). */
  concurrency?: number;
  /** How far ahead of their send time first turns are built, ns (default 1 s). */
  lookaheadNs?: number;
}

/** Default prepare-ahead window: 1 s. */
export const DEFAULT_LOOKAHEAD_NS = 1e9;

/** Error for a dataset that cannot be replayed on a fixed schedule. */
export class ScheduleError extends Error {
  override readonly name = 'ScheduleError';
}

/**
 * Earliest first-turn timestamp, the auto-offset zero.
 * @throws {ScheduleError} when a conversation's first turn has no timestamp.
 */
export function earliestFirstTurnMs(conversations: readonly Conversation[]): number {
  let min = Number.POSITIVE_INFINITY;
  for (const c of conversations) min = Math.min(min, firstTimestamp(c));
  return Number.isFinite(min) ? min : 0;
}

function firstTimestamp(c: Conversation): number {
  const ts = c.turns[0]?.timestampMs;
  if (ts === undefined) {
    const src = c.turns[0]?.source;
    throw new ScheduleError(
      `--fixed-schedule: conversation ${c.id} has no timestamp on its first turn${src ? ` (${src.file}:${src.line})` : ''}`,
    );
  }
  return ts;
}

/** Creates the fixed-schedule strategy. */
export function createFixedSchedule(options: FixedScheduleOptions): LoadStrategy {
  return {
    name: 'fixed_schedule',
    describe: () =>
      `fixed schedule (zero at trace ${options.zeroMs} ms${options.concurrency === undefined ? '' : `, at most ${options.concurrency} sessions`})`,
    run: (input) => runFixedSchedule(options, input),
  };
}

async function runFixedSchedule(
  options: FixedScheduleOptions,
  input: StrategyInput,
): Promise<StrategyResult> {
  const { clock, signal } = input;
  const order = input.conversations
    .map((c, i) => ({ c, i, ts: firstTimestamp(c) }))
    .sort((a, b) => a.ts - b.ts || a.i - b.i);
  const startNs = clock.nowNs();
  const targetNs = (ts: number): number => startNs + (ts - options.zeroMs) * 1e6;
  const slots = options.concurrency === undefined ? null : new Semaphore(options.concurrency);
  const running: Promise<void>[] = [];
  let issued = 0;
  const send = async (prepared: PreparedSend): Promise<void> => {
    issued++;
    await prepared.send();
  };
  const ahead = new PrepareAhead(
    order.length,
    (k) => targetNs((order[k] as (typeof order)[number]).ts),
    (k) => {
      const e = order[k] as (typeof order)[number];
      const first = e.c.turns[0] as Turn;
      return input.dispatch.prepare({
        conversation: e.c,
        turn: first,
        sessionNum: k,
        scheduledNs: targetNs(e.ts),
      });
    },
    clock,
    options.lookaheadNs ?? DEFAULT_LOOKAHEAD_NS,
  );
  for (let sessionNum = 0; sessionNum < order.length; sessionNum++) {
    const entry = order[sessionNum] as (typeof order)[number];
    const prepared = await ahead.take(sessionNum);
    await clock.sleepUntil(targetNs(entry.ts), signal);
    if (slots !== null) await slots.acquire();
    if (signal.aborted) {
      slots?.release();
      break;
    }
    const session = runSession(entry.c, sessionNum, prepared, targetNs, input, send).finally(() =>
      slots?.release(),
    );
    running.push(session);
  }
  await Promise.all(running);
  return { startNs, issued, stopped: signal.aborted };
}

async function runSession(
  conversation: Conversation,
  sessionNum: number,
  firstPrepared: PreparedSend,
  targetNs: (ts: number) => number,
  input: StrategyInput,
  send: (prepared: PreparedSend) => Promise<void>,
): Promise<void> {
  const { clock, signal } = input;
  await send(firstPrepared);
  for (const turn of conversation.turns.slice(1)) {
    if (signal.aborted) return;
    const scheduledNs = laterTurnTarget(turn, clock.nowNs(), targetNs);
    const prepared = input.dispatch.prepare({ conversation, turn, sessionNum, scheduledNs });
    await clock.sleepUntil(scheduledNs, signal);
    if (signal.aborted) return;
    await send(prepared);
  }
}

/** Target of a later turn: its own timestamp, else previous completion + delay, else now. */
function laterTurnTarget(turn: Turn, nowNs: number, targetNs: (ts: number) => number): number {
  if (turn.timestampMs !== undefined) return Math.max(targetNs(turn.timestampMs), nowNs);
  if (turn.delayMs !== undefined) return nowNs + turn.delayMs * 1e6;
  return nowNs;
}
