/**
 * Client warm-up: before the first measured request, this process runs its own request path —
 * prompt building, body encoding, the HTTP client, SSE decoding, record processing — for
 * `--client-warmup-ms` against a simulator started inside this process, not against the target
 * server. Nothing reaches the target, so its KV cache and counters are untouched.
 *
 * Why: V8 runs a function in its interpreter until it has been called often enough to compile it.
 * A replay at 1,000 requests/s that starts with cold code sends its first requests late and reads
 * their streams late, and on a small machine that backlog feeds on itself for a second or two
 * (measured in bench/README.md). A few hundred requests beforehand remove most of it.
 */

import type { RunPlan } from '../config/plan.js';
import type { Conversation, Dataset, StreamedTurn, Turn } from '../dataset/types.js';
import { startSimulator } from '../simulator/server.js';
import type { RunContext } from './context.js';
import { runPhase } from './phase.js';
import { buildStrategy, type PhaseLimits } from './strategy-factory.js';

/** Requests the warm-up keeps in flight. */
export const CLIENT_WARMUP_CONCURRENCY = 8;

/** Warm-up conversations built from a streamed trace's first row. */
const STREAMED_WARMUP_CONVERSATIONS = 32;

/** Hash ids of warm-up prompts start here, far above any trace's ids, so no real block is cached early. */
const WARMUP_HASH_ID_BASE = 2 ** 40;

/** What the warm-up did. */
export interface ClientWarmupResult {
  /** Requests completed. */
  requests: number;
  /** Of which failed (a warm-up failure is not a run failure; it is only reported). */
  errors: number;
  /** Wall time, ms. */
  durationMs: number;
}

/**
 * Runs the client warm-up: a concurrency-{@link CLIENT_WARMUP_CONCURRENCY} phase of
 * `config.clientWarmupMs` against an in-process fixed-mode simulator (no delays), on the run's own
 * conversations, or for a streamed trace on copies of its first row with warm-up-only hash ids.
 * Records are discarded. Stops early when the run's stop signal fires.
 * @param ctx the run's context (tokenizer, synthesizer, adapter, dataset).
 * @param first the first row of a streamed trace (null when the dataset was loaded whole).
 * @returns counts and duration.
 */
export async function warmUpClient(ctx: RunContext, first: StreamedTurn | null): Promise<ClientWarmupResult> {
  const t0 = performance.now();
  const sim = await startSimulator(
    { models: [...ctx.config.models], mode: 'fixed', ttftMs: 0, itlMs: 0, tokenizer: ctx.config.tokenizer },
    { tokenizer: ctx.tokenizer },
  );
  try {
    const config = warmupConfig(ctx.config);
    const dataset = warmupDataset(ctx.dataset, first);
    const limits: PhaseLimits = {
      stop: { durationNs: ctx.config.clientWarmupMs * 1e6 },
      onePass: false,
      load: config.load,
      prefill: null,
    };
    // Never the run's ideal prefix cache: nothing of the warm-up reaches the target's cache.
    const { idealCaches: _runCaches, ...runCtx } = ctx;
    const warmCtx: RunContext = { ...runCtx, config, dataset, targets: [sim.url], stream: null };
    const result = await runPhase(
      warmCtx,
      'warmup',
      buildStrategy(config, dataset, limits, 'warmup'),
      limits,
    );
    const errors = result.summary.build().errorSummary.reduce((sum, e) => sum + e.count, 0);
    // The warm-up's prompts (other rows, or warm-up-only ids) say nothing about the run's block sizes.
    ctx.synthesizer.blocks.resetSizeConflicts();
    return { requests: result.recordCount, errors, durationMs: performance.now() - t0 };
  } finally {
    await sim.close();
  }
}

/**
 * The run's configuration turned into a closed loop against the in-process simulator (its length
 * comes from the phase limits): no rate, no fixed schedule, the simulator's own paths, no
 * cancellations, no progress output.
 */
function warmupConfig(plan: RunPlan): RunPlan {
  const { endpointPath: _path, ...rest } = plan;
  return {
    ...rest,
    load: { kind: 'concurrency', concurrency: CLIENT_WARMUP_CONCURRENCY },
    prefill: null,
    warmup: null,
    cancellation: null,
    gracePeriodSeconds: 1,
    ui: 'none',
  };
}

/** The run's conversations without their schedule, or copies of a streamed trace's first row. */
function warmupDataset(dataset: Dataset, first: StreamedTurn | null): Dataset {
  if (dataset.conversations.length > 0 || first === null) {
    // No delays between turns: the warm-up is a closed loop, and a long delay would hold it past its length.
    const conversations = dataset.conversations.map((c) => ({ ...c, turns: c.turns.map(withoutSchedule) }));
    return { ...dataset, conversations };
  }
  const conversations: Conversation[] = [];
  for (let k = 0; k < STREAMED_WARMUP_CONVERSATIONS; k++) {
    conversations.push({
      id: `warmup-${k}`,
      contextMode: first.contextMode,
      turns: [{ ...withoutSchedule(first.turn), index: 0, prompt: warmupPrompt(first.turn, k) }],
    });
  }
  return { ...dataset, conversations, turnCount: conversations.length };
}

function withoutSchedule(turn: Turn): Turn {
  const { timestampMs: _ts, delayMs: _delay, ...rest } = turn;
  return rest;
}

/** A synthetic prompt keeps its shape but gets hash ids no trace uses; other prompts are kept. */
function warmupPrompt(turn: Turn, k: number): Turn['prompt'] {
  const p = turn.prompt;
  if (p.kind !== 'synthetic') return p;
  const base = WARMUP_HASH_ID_BASE + k * p.hashIds.length;
  return { ...p, hashIds: p.hashIds.map((_, i) => base + i) };
}
