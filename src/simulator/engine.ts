/**
 * Engine-mode scheduler: continuous batching in discrete steps, after vLLM's V1 scheduler. One
 * global loop runs steps back to back on absolute monotonic timestamps (a late timer does not
 * shift later steps). Each step:
 *  1. admits waiting sequences FCFS while fewer than `maxRunning` run and the KV pool can hold
 *     prompt + output blocks (prefix-cache hits are taken at admission);
 *  2. schedules every decoding sequence (1 token each), then prompt chunks (chunked prefill) into the
 *     rest of the `maxBatchedTokens` budget, oldest first;
 *  3. lasts `a + b·prefillTokens + c·decodeSeqs + d·decodeContextTokens` ms;
 *  4. at its end emits the first token of each sequence whose prefill finished in it and one token
 *     per decoding sequence.
 */
import { monotonicNowNs } from '../timing/clock.js';
import { DueTimer } from './due-timer.js';
import type { KvPool } from './kv-pool.js';
import type { Scheduler, Sequence } from './sequence.js';

/** Step-cost coefficients and limits (see SimulatorOptions for units). */
export interface EngineParams {
  stepBaseMs: number;
  prefillMsPerToken: number;
  decodeMsPerSeq: number;
  decodeMsPerContextToken: number;
  maxBatchedTokens: number;
  maxRunning: number;
}

/** What one step does; kept for the step log. */
export interface StepPlan {
  startNs: number;
  endNs: number;
  prefill: Array<{ seq: Sequence; tokens: number }>;
  decode: Sequence[];
  prefillTokens: number;
  contextTokens: number;
}

/** Observer of finished steps (stats, tests). */
export type StepListener = (plan: StepPlan) => void;

/** Step duration in ms for a step with the given work. */
export function stepDurationMs(
  p: EngineParams,
  prefillTokens: number,
  decodeSeqs: number,
  contextTokens: number,
): number {
  return (
    p.stepBaseMs +
    p.prefillMsPerToken * prefillTokens +
    p.decodeMsPerSeq * decodeSeqs +
    p.decodeMsPerContextToken * contextTokens
  );
}

/** The step loop. */
export class EngineScheduler implements Scheduler {
  private readonly queue: Sequence[] = [];
  private active: Sequence[] = [];
  private timer: DueTimer | null = null;
  private closed = false;
  private steps = 0;

  constructor(
    private readonly params: EngineParams,
    private readonly pool: KvPool,
    private readonly onStep?: StepListener,
  ) {}

  submit(seq: Sequence): void {
    const nowNs = monotonicNowNs();
    seq.queuedNs = nowNs;
    this.queue.push(seq);
    if (this.timer === null && !this.closed) this.runStep(nowNs);
  }

  cancel(seq: Sequence): void {
    if (seq.finished) return;
    seq.finished = true;
    if (seq.alloc !== null) this.pool.release(seq.alloc);
    seq.alloc = null;
  }

  running(): number {
    return this.active.length;
  }

  waiting(): number {
    return this.queue.length;
  }

  /** Steps run so far. */
  stepCount(): number {
    return this.steps;
  }

  close(): void {
    this.closed = true;
    this.timer?.cancel();
    this.timer = null;
  }

  /** Admits what fits at the start of the step beginning at `startNs`. */
  private admit(startNs: number): void {
    this.active = this.active.filter((s) => !s.finished);
    while (this.queue.length > 0 && this.active.length < this.params.maxRunning) {
      const seq = this.queue[0] as Sequence;
      if (seq.finished) {
        this.queue.shift();
        continue;
      }
      const total = this.pool.blocksFor(seq.promptTokens + seq.outputTokens);
      const alloc = this.pool.allocate(seq.blockKeys, seq.promptTokens, total);
      if (alloc === null) break;
      this.queue.shift();
      seq.alloc = alloc;
      seq.cachedTokens = alloc.hitKeys.length * this.pool.blockSize;
      seq.prefillRemaining = seq.promptTokens - seq.cachedTokens;
      // A step's start is its modelled time; a request that arrived while the timer of the step
      // before ran late is admitted when it arrived, not before.
      seq.admittedNs = Math.max(startNs, seq.queuedNs ?? startNs);
      this.active.push(seq);
    }
  }

  private plan(startNs: number): StepPlan {
    const decode = this.active.filter((s) => s.prefillRemaining === 0 && s.generated > 0);
    let budget = this.params.maxBatchedTokens - decode.length;
    const prefill: StepPlan['prefill'] = [];
    let prefillTokens = 0;
    for (const seq of this.active) {
      if (seq.prefillRemaining === 0 && seq.generated > 0) continue;
      if (budget <= 0 && seq.prefillRemaining > 0) break;
      const tokens = Math.min(seq.prefillRemaining, budget);
      prefill.push({ seq, tokens });
      prefillTokens += tokens;
      budget -= tokens;
    }
    let contextTokens = 0;
    for (const s of decode) contextTokens += s.promptTokens + s.generated;
    const ms = stepDurationMs(this.params, prefillTokens, decode.length, contextTokens);
    return { startNs, endNs: startNs + ms * 1e6, prefill, decode, prefillTokens, contextTokens };
  }

  private runStep(startNs: number): void {
    this.timer = null;
    if (this.closed) return;
    this.admit(startNs);
    if (this.active.length === 0) return;
    const plan = this.plan(startNs);
    // A step's tokens are never emitted before the step's modelled end (see DueTimer).
    this.timer = new DueTimer(plan.endNs, () => this.finishStep(plan));
  }

  private finishStep(plan: StepPlan): void {
    this.steps++;
    const batch = plan.prefill.length + plan.decode.length;
    for (const { seq, tokens } of plan.prefill) {
      if (seq.finished) continue;
      seq.prefillRemaining -= tokens;
      if (seq.prefillRemaining === 0) {
        if (seq.alloc !== null) this.pool.commitPrompt(seq.alloc, seq.blockKeys);
        this.emit(seq, plan.endNs, batch);
      }
    }
    for (const seq of plan.decode) if (!seq.finished) this.emit(seq, plan.endNs, batch);
    this.onStep?.(plan);
    this.runStep(plan.endNs);
  }

  private emit(seq: Sequence, nowNs: number, batch: number): void {
    const index = seq.generated++;
    seq.sink.onToken(index, nowNs, batch);
    if (seq.generated >= seq.outputTokens && !seq.finished) {
      this.cancel(seq);
      seq.sink.onDone(nowNs);
    }
  }
}
