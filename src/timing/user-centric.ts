/**
 * User-centric timing (AIPerf `--user-centric-rate R --num-users U`, docs/tutorials/
 * user-centric-timing.md): U simulated users, each running one multi-turn session at a time, each
 * sending a turn every `U / R` seconds (the turn gap), so the whole load is about R requests/s.
 *
 * The run starts in a steady state rather than with every user at its first turn ("virtual
 * history"): with sessions of T turns (the dataset's average, rounded) a session lives L = max(1,
 * T − 1) gaps, and the U users are spread evenly over that life. User i (0-based) is (U − i)·L/U
 * gaps old, so it has L − ⌊(U − i)·L / U⌋ turns left (user 0 has none: it is replaced at once by a
 * fresh user with every turn, who sends first). The users send their first turn 1/R apart, in an
 * order that interleaves short and long remainders: position U − ((U − i)·L mod U), or, when U and L
 * share a factor (those positions would repeat), U − (i·k mod U) with k the smallest step > 1
 * coprime with U. A new user with a whole session is started on a fixed schedule: each user's slot
 * is taken over by a new one `turns × gap` after that user's first send, whatever the server does.
 *
 * A user's next turn is due one gap after its previous turn was due, and never before the previous
 * answer: a late answer sends the next turn at once and the user's schedule restarts from there.
 * Turn delays of the dataset are not used (the gap replaces them). With `concurrency`, at most that
 * many users hold a session at once (the slots opened over `concurrencyRampNs` when given); a new
 * user waits for a slot.
 */
import type { Conversation, Turn } from '../dataset/types.js';
import { RampedSemaphore } from './ramped-semaphore.js';
import { IssueBudget, type SessionSource, type StopConditions } from './session-source.js';
import type { LoadStrategy, StrategyInput, UserCentricReport } from './types.js';

/** Options of the user-centric strategy. */
export interface UserCentricOptions {
  /** `--user-centric-rate`: requests/s over all users (> 0). */
  ratePerS: number;
  /** `--num-users` (>= 1). */
  users: number;
  /** Sessions for the users, in dataset sampling order. */
  source: SessionSource;
  stop: StopConditions;
  /** Turns of a session, the dataset's average rounded (>= 1): sets the users' virtual history. */
  sessionTurns: number;
  /** `--concurrency`: users holding a session at once; absent: no cap. */
  concurrency?: number;
  /** `--concurrency-ramp-duration`: the cap's slots open one by one over this time from the first user, ns. */
  concurrencyRampNs?: number;
}

/** One user of the opening steady state: when it sends first (in staggers) and how many turns it has left. */
export interface OpeningUser {
  /** Its first send is `order / rate` seconds after the start (0 = first). */
  order: number;
  /** Turns it sends; null: a whole session. */
  turns: number | null;
}

/** The smallest step > 1 coprime with `n` (1 when there is none, n <= 2). */
function coprimeStep(n: number): number {
  for (let step = 2; step < n; step++) if (gcd(n, step) === 1) return step;
  return 1;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

/**
 * The users of the opening steady state for `users` users and sessions of `sessionTurns` turns, in
 * user order: the ones with turns left, then the fresh user who replaces user 0 and sends first.
 */
export function openingUsers(users: number, sessionTurns: number): OpeningUser[] {
  const life = Math.max(1, sessionTurns - 1);
  const step = gcd(users, life) > 1 ? coprimeStep(users) : null;
  const out: OpeningUser[] = [];
  for (let i = 0; i < users; i++) {
    const age = (users - i) * life;
    const left = life - Math.floor(age / users);
    if (left <= 0) continue;
    const position = step === null ? age % users : (i * step) % users;
    out.push({ order: users - position, turns: left });
  }
  out.push({ order: 0, turns: null });
  return out;
}

/** Creates the user-centric strategy. */
export function createUserCentric(options: UserCentricOptions): LoadStrategy<UserCentricReport> {
  const gapS = options.users / options.ratePerS;
  return {
    name: 'user_centric',
    describe: () =>
      `user-centric rate ${options.ratePerS}/s, ${options.users} users (a turn every ${round3(gapS)} s per user)${options.concurrency === undefined ? '' : `, at most ${options.concurrency} ${options.concurrency === 1 ? 'session' : 'sessions'}`}`,
    run: (input) => new UserCentricRun(options, input).run(),
  };
}

const round3 = (x: number): number => Math.round(x * 1000) / 1000;

/** One run of the strategy: its users in flight and the schedule of new ones. */
class UserCentricRun {
  private readonly startNs: number;
  private readonly gapNs: number;
  private readonly staggerNs: number;
  private readonly budget: IssueBudget;
  private readonly slots: RampedSemaphore | null;
  private readonly users = new Set<Promise<void>>();
  private sessions = 0;
  private spawned = 0;
  private sourceDone = false;

  constructor(
    private readonly options: UserCentricOptions,
    private readonly input: StrategyInput,
  ) {
    this.startNs = input.startAtNs ?? input.clock.nowNs();
    this.gapNs = (options.users / options.ratePerS) * 1e9;
    this.staggerNs = 1e9 / options.ratePerS;
    this.budget = new IssueBudget(options.stop, this.startNs);
    const rampNs = options.concurrencyRampNs;
    this.slots =
      options.concurrency === undefined
        ? null
        : new RampedSemaphore(
            options.concurrency,
            rampNs === undefined ? undefined : { clock: input.clock, rampNs },
          );
  }

  async run(): Promise<UserCentricReport> {
    const { clock, signal } = this.input;
    await clock.sleepUntil(this.startNs, signal);
    // Each slot of the steady state: when its user sends first, and its turns.
    const slots = openingUsers(this.options.users, this.options.sessionTurns)
      .map((u) => ({ firstNs: this.startNs + u.order * this.staggerNs, turns: u.turns }))
      .sort((a, b) => a.firstNs - b.firstNs);
    const opening = slots.length;
    await Promise.all(slots.map((slot) => this.slot(slot.firstNs, slot.turns)));
    while (this.users.size > 0) await Promise.all([...this.users]);
    this.slots?.close();
    return {
      kind: 'user_centric',
      startNs: this.startNs,
      issued: this.budget.issued,
      stopped: signal.aborted,
      users: { opening, started: this.spawned, turnGapS: this.gapNs / 1e9 },
    };
  }

  /**
   * One slot of the steady state: its user starts at `firstNs` (with `turns` turns, or a whole
   * session), and each next user of the slot `turns × gap` after the previous one's first send.
   */
  private async slot(firstNs: number, turns: number | null): Promise<void> {
    const { clock, signal } = this.input;
    let dueNs = firstNs;
    let limit = turns;
    for (;;) {
      await clock.sleepUntil(Math.min(dueNs, this.budget.endNs()), this.budget.waitSignal(signal));
      if (this.stopped()) return;
      const conversation = this.nextSession();
      if (conversation === undefined) return;
      const sent = Math.min(limit ?? conversation.turns.length, conversation.turns.length);
      const capWaitNs = await this.takeSlot(dueNs);
      const user = this.runUser(conversation, sent, dueNs, capWaitNs).finally(() => {
        this.slots?.release();
        this.users.delete(user);
      });
      this.users.add(user);
      dueNs += sent * this.gapNs;
      limit = null;
    }
  }

  /**
   * Takes a session slot for a user due at `dueNs`; returns how much of its lateness waiting for it
   * imposed, ns (its `concurrency_wait`: from `dueNs` to the slot freeing, 0 when one was free), or
   * undefined without a cap.
   */
  private async takeSlot(dueNs: number): Promise<number | undefined> {
    if (this.slots === null) return undefined;
    if (this.slots.tryAcquire()) return 0;
    await this.slots.acquire();
    return Math.max(0, this.input.clock.nowNs() - dueNs);
  }

  private stopped(): boolean {
    return this.input.signal.aborted || this.budget.exhausted(this.input.clock.nowNs());
  }

  private nextSession(): Conversation | undefined {
    if (this.sourceDone) return undefined;
    const conversation = this.options.source.next();
    if (conversation === undefined) this.sourceDone = true;
    else this.spawned++;
    return conversation;
  }

  /**
   * Sends the first `turns` turns of `conversation` as one user, the first due at `firstDueNs`;
   * `capWaitNs` is the first turn's wait for a session slot (the later ones hold it: 0).
   */
  private async runUser(
    conversation: Conversation,
    turns: number,
    firstDueNs: number,
    capWaitNs: number | undefined,
  ): Promise<void> {
    const { clock, signal, dispatch } = this.input;
    const session = turns === conversation.turns.length ? conversation : truncated(conversation, turns);
    const sessionNum = this.sessions++;
    let dueNs = firstDueNs;
    for (const turn of session.turns as readonly Turn[]) {
      if (turn.index > 0) {
        // One gap after the previous turn was due; at once when its answer came later than that.
        dueNs = Math.max(clock.nowNs(), dueNs + this.gapNs);
        await clock.sleepUntil(Math.min(dueNs, this.budget.endNs()), this.budget.waitSignal(signal));
      }
      if (signal.aborted || !this.budget.tryIssue(clock.nowNs())) return;
      const waitNs = turn.index === 0 || capWaitNs === undefined ? capWaitNs : 0;
      await dispatch
        .prepare({ conversation: session, turn, sessionNum, scheduledNs: dueNs })
        .send(undefined, waitNs);
    }
  }
}

/** `conversation` with its first `turns` turns only (a user of the opening steady state). */
function truncated(conversation: Conversation, turns: number): Conversation {
  return { ...conversation, turns: conversation.turns.slice(0, turns) };
}
