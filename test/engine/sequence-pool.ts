/**
 * The context sequences of one llama.cpp context, lent to one request at a time, with prefix reuse:
 * a request gets the free sequence whose KV cache shares the longest prefix with its prompt, so a
 * follow-up turn or a shared system prompt is not evaluated again — an engine's prefix cache,
 * bounded by the number of sequences. A prefix shorter than {@link MIN_REUSE_TOKENS} (such as the
 * chat template's opening, which every prompt shares) is not worth the cached prompt it would
 * overwrite: the request then takes the least recently used free sequence (an unused one first).
 */
import type { LlamaContext, LlamaContextSequence, Token } from 'node-llama-cpp';

/** Shortest shared prefix worth reusing a sequence for, tokens (one 16-token KV block of the Bailian traces). */
export const MIN_REUSE_TOKENS = 16;

interface Slot {
  sequence: LlamaContextSequence;
  lastUsed: number;
}

/** A sequence lent to a request, its KV cache already cut back to the prompt's reusable prefix. */
export interface Lease {
  sequence: LlamaContextSequence;
  /** Prompt tokens whose KV state the sequence already held (at most the prompt length − 1). */
  reusedTokens: number;
}

/** Lends every sequence of `context`; requests beyond them wait in arrival order. */
export class SequencePool {
  private readonly free: Slot[] = [];
  private readonly waiting: Array<() => void> = [];
  private uses = 0;

  constructor(context: LlamaContext) {
    while (context.sequencesLeft > 0) this.free.push({ sequence: context.getSequence(), lastUsed: 0 });
  }

  /**
   * Waits for a free sequence, picks the best one for `prompt`, and erases its state after the
   * shared prefix. One prompt token is always left to evaluate, since the next token is sampled from
   * the logits of the prompt's last token.
   */
  async acquire(prompt: readonly Token[]): Promise<Lease> {
    while (this.free.length === 0) await new Promise<void>((resolve) => this.waiting.push(resolve));
    const index = this.bestFor(prompt);
    const slot = this.free.splice(index, 1)[0] as Slot;
    slot.lastUsed = ++this.uses;
    const { sequence } = slot;
    const shared = sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex;
    const reusedTokens = Math.min(shared, prompt.length - 1);
    if (reusedTokens < sequence.nextTokenIndex) {
      await sequence.eraseContextTokenRanges([{ start: reusedTokens, end: sequence.nextTokenIndex }]);
    }
    return { sequence, reusedTokens };
  }

  /** Returns a sequence (its KV cache kept for later prefixes) and wakes the next waiting request. */
  release(sequence: LlamaContextSequence): void {
    this.free.push({ sequence, lastUsed: this.uses });
    this.waiting.shift()?.();
  }

  private bestFor(prompt: readonly Token[]): number {
    let longest = 0;
    let longestShared = 0;
    let oldest = 0;
    this.free.forEach((slot, i) => {
      const shared = slot.sequence.compareContextTokens(prompt as Token[]).firstDifferentIndex;
      const used = this.free[longest] as Slot;
      if (shared > longestShared || (shared === longestShared && slot.lastUsed < used.lastUsed)) {
        longest = i;
        longestShared = shared;
      }
      if (slot.lastUsed < (this.free[oldest] as Slot).lastUsed) oldest = i;
    });
    return longestShared >= MIN_REUSE_TOKENS ? longest : oldest;
  }
}
