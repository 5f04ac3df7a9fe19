/**
 * Runs the fixed-schedule strategy on a virtual clock with a fake dispatch in which every request
 * takes `durationMs(id, turn)` of virtual time, and returns what was sent when. Shared by the
 * fixed-schedule and streamed-replay unit tests.
 */
import type { Conversation, StreamedTurn } from '../../src/dataset/types.js';
import { createFixedSchedule } from '../../src/timing/fixed-schedule.js';
import type { SessionPacingOptions } from '../../src/timing/session-pacing.js';
import type { DispatchItem, FixedScheduleReport, ReplayReport } from '../../src/timing/types.js';
import { VirtualClock } from '../../src/timing/virtual-clock.js';

const MS = 1e6;

/** One request as the fake server saw it, times in virtual ms from the run's start. */
export interface Sent {
  id: string;
  turn: number;
  scheduledMs: number;
  sentMs: number;
  doneMs: number;
}

/** The strategy's report with its replay facts beside its counts (`issued`, `rowsRead`, `feedError`, …). */
export type ReplayResult = Omit<FixedScheduleReport, 'replay'> & ReplayReport;

/** Options of {@link virtualReplay}. */
export interface VirtualReplayOptions {
  conversations?: Conversation[];
  feed?: AsyncIterable<StreamedTurn>;
  zeroMs: number | 'auto';
  durationMs: (id: string, turn: number) => number;
  concurrency?: number;
  readAheadNs?: number;
  /** Open or closed loop and the idle-gap cap (default: open loop, no cap). */
  pacing?: SessionPacingOptions;
  /** Called at each send (e.g. to see how much of the feed had been read by then). */
  onSend?: (item: DispatchItem) => void;
  /** Called each time a request is built (ahead of its send or at it). */
  onPrepare?: (item: DispatchItem) => void;
}

/** Replays and returns the sends sorted by send time (then id), plus the strategy's result. */
export async function virtualReplay(
  options: VirtualReplayOptions,
): Promise<{ sent: Sent[]; result: ReplayResult }> {
  const clock = new VirtualClock(1000 * MS);
  const sent: Sent[] = [];
  const strategy = createFixedSchedule({
    zeroMs: options.zeroMs,
    ...(options.concurrency === undefined ? {} : { concurrency: options.concurrency }),
    ...(options.feed === undefined ? {} : { feed: options.feed }),
    ...(options.readAheadNs === undefined ? {} : { readAheadNs: options.readAheadNs }),
    ...(options.pacing === undefined ? {} : { pacing: options.pacing }),
  });
  const start = clock.nowNs();
  const dispatch = {
    prepare: (item: DispatchItem) => {
      options.onPrepare?.(item);
      return {
        send: async (): Promise<void> => {
          options.onSend?.(item);
          const sentNs = clock.nowNs();
          await clock.sleepUntil(sentNs + options.durationMs(item.conversation.id, item.turn.index) * MS);
          sent.push({
            id: item.conversation.id,
            turn: item.turn.index,
            scheduledMs: ((item.scheduledNs ?? Number.NaN) - start) / MS,
            sentMs: (sentNs - start) / MS,
            doneMs: (clock.nowNs() - start) / MS,
          });
        },
      };
    },
  };
  const conversations = options.conversations ?? [];
  const done = strategy.run({ conversations, clock, dispatch, signal: new AbortController().signal });
  await clock.runUntilIdle(done);
  const { replay, ...counts } = await done;
  sent.sort((a, b) => a.sentMs - b.sentMs || a.id.localeCompare(b.id) || a.turn - b.turn);
  return { sent, result: { ...counts, ...replay } };
}
