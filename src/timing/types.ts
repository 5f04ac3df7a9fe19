/**
 * Load strategies decide WHEN each turn is sent; they never touch sockets. One file per strategy,
 * chosen from the typed registry in `timing/registry.ts`.
 */
import type { Conversation, Turn } from '../dataset/types.js';
import type { Clock } from './clock.js';

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
  /** Sends it; resolves when its response has completed or failed (never rejects). */
  send(): Promise<void>;
}

/**
 * The sender, in two steps so that building a large prompt never delays a send: strategies call
 * `prepare` before waiting for the target time and `send` when it is due.
 */
export interface Dispatch {
  prepare(item: DispatchItem): PreparedSend;
}

/** What every strategy receives. */
export interface StrategyInput {
  conversations: readonly Conversation[];
  clock: Clock;
  dispatch: Dispatch;
  /** Aborting stops issuing new requests (in-flight ones are the caller's business). */
  signal: AbortSignal;
}

/** What a strategy reports when it has issued everything and all its dispatches have settled. */
export interface StrategyResult {
  /** Monotonic ns of the schedule's time zero. */
  startNs: number;
  /** Requests issued. */
  issued: number;
  /** True when the signal stopped issuing early. */
  stopped: boolean;
}

/** A load strategy. */
export interface LoadStrategy {
  readonly name: string;
  /** One-line description for logs and the console footer. */
  describe(): string;
  run(input: StrategyInput): Promise<StrategyResult>;
}
