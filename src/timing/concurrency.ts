/**
 * Closed-loop concurrency (AIPerf `--concurrency`): N session slots; each slot runs one session's
 * turns back to back (a turn's `delayMs` counted from the previous completion) and takes the next
 * session when its session ends, so a slot is held until a session's last turn completes. With
 * `rampNs`, slot i opens at `start + i·ramp/N` (`--concurrency-ramp-duration`).
 */
import type { Conversation } from '../dataset/types.js';
import { IssueBudget, type SessionSource, type StopConditions } from './session-source.js';
import type { ConcurrencyReport, LoadStrategy, StrategyInput } from './types.js';

/** Options of the concurrency strategy. */
export interface ConcurrencyOptions {
  concurrency: number;
  source: SessionSource;
  stop: StopConditions;
  /** Ramp-up time over which slots open, ns. */
  rampNs?: number;
}

/** Creates the closed-loop concurrency strategy. */
export function createConcurrency(options: ConcurrencyOptions): LoadStrategy<ConcurrencyReport> {
  return {
    name: 'concurrency',
    describe: () =>
      `concurrency ${options.concurrency}${options.rampNs === undefined ? '' : ` (ramp ${options.rampNs / 1e9} s)`}`,
    run: (input) => runConcurrency(options, input),
  };
}

async function runConcurrency(options: ConcurrencyOptions, input: StrategyInput): Promise<ConcurrencyReport> {
  const { clock, signal } = input;
  const startNs = input.startAtNs ?? clock.nowNs();
  await clock.sleepUntil(startNs, signal);
  const budget = new IssueBudget(options.stop, startNs);
  let sessions = 0;
  const slot = async (i: number): Promise<void> => {
    if (options.rampNs !== undefined)
      await clock.sleepUntil(startNs + (i * options.rampNs) / options.concurrency, signal);
    for (;;) {
      if (signal.aborted || budget.exhausted(clock.nowNs())) return;
      const conversation = options.source.next();
      if (conversation === undefined) return;
      const more = await runClosedSession(conversation, sessions++, budget, input);
      if (!more) return;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, i) => slot(i)));
  return { kind: 'concurrency', startNs, issued: budget.issued, stopped: signal.aborted };
}

/** Runs one session's turns; false when the budget or signal stopped it. */
async function runClosedSession(
  conversation: Conversation,
  sessionNum: number,
  budget: IssueBudget,
  input: StrategyInput,
): Promise<boolean> {
  const { clock, signal } = input;
  for (const turn of conversation.turns) {
    if (turn.index > 0 && turn.delayMs !== undefined) {
      // The wait ends early when the run does: at the duration's end, or once the count is reached.
      const wakeNs = Math.min(clock.nowNs() + turn.delayMs * 1e6, budget.endNs());
      await clock.sleepUntil(wakeNs, budget.waitSignal(signal));
    }
    if (signal.aborted || !budget.tryIssue(clock.nowNs())) return false;
    await input.dispatch.prepare({ conversation, turn, sessionNum, scheduledNs: null }).send();
  }
  return true;
}
