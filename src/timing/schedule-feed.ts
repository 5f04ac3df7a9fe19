/**
 * What a fixed-schedule replay reads: trace rows as {@link StreamedTurn}s, either streamed from a
 * file while the replay runs, or produced from conversations loaded whole.
 */
import type { Conversation, StreamedTurn } from '../dataset/types.js';
import { TokenloadError } from '../errors.js';

/** Error for a dataset that cannot be replayed on a fixed schedule. */
export class ScheduleError extends TokenloadError {
  override readonly name = 'ScheduleError';
  constructor(message: string) {
    super('E_SCHEDULE', message);
  }
}

/**
 * Timestamp (ms) of a conversation's first turn.
 * @throws {ScheduleError} when the first turn has no timestamp (naming file and line).
 */
export function firstTimestampMs(c: Conversation): number {
  const ts = c.turns[0]?.timestampMs;
  if (ts === undefined) {
    const src = c.turns[0]?.source;
    throw new ScheduleError(
      `--fixed-schedule: conversation ${c.id} has no timestamp on its first turn${src ? ` (${src.file}:${src.line})` : ''}`,
    );
  }
  return ts;
}

/**
 * Earliest first-turn timestamp, the auto-offset zero (0 for no conversations).
 * @throws {ScheduleError} when a conversation's first turn has no timestamp.
 */
export function earliestFirstTurnMs(conversations: readonly Conversation[]): number {
  let min = Number.POSITIVE_INFINITY;
  for (const c of conversations) min = Math.min(min, firstTimestampMs(c));
  return Number.isFinite(min) ? min : 0;
}

/**
 * The turns of whole conversations as a feed: conversations in first-turn timestamp order (stable),
 * each with all its turns at once, the last one marked `lastOfSession`, each carrying its
 * conversation's `treeId` and `branch` (a Bailian tree replay).
 * @throws {ScheduleError} (before yielding anything) when a first turn has no timestamp.
 */
export function feedFromConversations(conversations: readonly Conversation[]): AsyncIterable<StreamedTurn> {
  const order = conversations
    .map((c, i) => ({ c, i, ts: firstTimestampMs(c) }))
    .sort((a, b) => a.ts - b.ts || a.i - b.i);
  return (async function* () {
    for (const { c } of order) {
      for (let k = 0; k < c.turns.length; k++) {
        const row: StreamedTurn = {
          sessionId: c.id,
          turn: c.turns[k] as StreamedTurn['turn'],
          order: k,
          contextMode: c.contextMode,
          lastOfSession: k === c.turns.length - 1,
        };
        if (c.treeId !== undefined) row.treeId = c.treeId;
        if (c.branch !== undefined) row.branch = c.branch;
        yield row;
      }
    }
  })();
}
