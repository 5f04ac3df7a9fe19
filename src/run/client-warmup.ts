/**
 * Client warm-up: before the first measured request, this process runs its own request path —
 * prompt building, body encoding, the HTTP client, SSE decoding, record processing, the JSONL and
 * `inputs.json` writers — against a simulator started inside this process, not against the target
 * server. Nothing reaches the target, so its KV cache and counters are untouched.
 *
 * Why: V8 runs a function in its interpreter until it has been called often enough to compile it.
 * A replay at 1,000 requests/s that starts with cold code sends its first requests late and reads
 * their streams late, and on a small machine that backlog feeds on itself for a second or two
 * (measured in bench/README.md).
 *
 * How long: in rounds of {@link WARMUP_ROUND_REQUESTS} completed requests, each measuring this process's CPU per completed
 * request; it stops once that has stopped falling (the mean of the latest
 * {@link WARMUP_WINDOW_ROUNDS} rounds less than {@link WARMUP_MIN_GAIN} below the mean of the
 * {@link WARMUP_WINDOW_ROUNDS} before them), once a run whose rate is known would keep the client
 * under {@link WARMUP_LIGHT_LOAD_SHARE} of a core at the cost reached, or at `--client-warmup-ms`,
 * whichever comes first.
 * Measured on this project's 2-core VM (1,000 requests/s, 16 tokens): 3.5 ms per request in the
 * first round, 0.55 ms after 1,000 requests and still falling, 0.30 ms from about 2,500 on, where
 * rounds of 100 differ by ±10 %; a rule over single rounds stopped at the first noisy pair. The in-process
 * server streams one token per write {@link WARMUP_ITL_MS} apart, as servers do, so the
 * one-event-per-read path is the one compiled.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunPlan } from '../config/plan.js';
import type { Conversation, Dataset, StreamedTurn, Turn } from '../dataset/types.js';
import { startSimulator } from '../simulator/server.js';
import type { RunContext } from './context.js';
import { runPhase } from './phase.js';
import { buildStrategy, type PhaseLimits } from './strategy-factory.js';
import { demandOf } from './workers-auto.js';

/** Requests the warm-up keeps in flight. */
export const CLIENT_WARMUP_CONCURRENCY = 32;

/** Requests one measuring round of the warm-up completes. */
export const WARMUP_ROUND_REQUESTS = 100;

/** How often the warm-up looks whether a round is complete, ms. */
const ROUND_CHECK_MS = 20;

/** Rounds compared as one window: the mean of the latest window against the one before it. */
export const WARMUP_WINDOW_ROUNDS = 8;

/** The warm-up ends once a window's CPU per request is less than this fraction below the previous window's. */
export const WARMUP_MIN_GAIN = 0.05;

/**
 * A run whose rate is known before it starts and keeps this process under this share of one core at
 * the latest round's CPU per request gains nothing from more warming (a 1 request/s replay at 1.5 ms
 * a request is 0.15 % of a core), so the warm-up ends there.
 */
export const WARMUP_LIGHT_LOAD_SHARE = 0.1;

/** Gap between the in-process server's token writes, ms (Node timers cannot go below 1 ms). */
export const WARMUP_ITL_MS = 1;

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
  /** This process's CPU per completed request in each round, ms. */
  cpuMsPerRequest: number[];
  /** Mean CPU per request of the last two windows of rounds (earlier, latest), ms; null with fewer rounds. */
  windowMeansMs: [number, number] | null;
  /**
   * `plateau`: the CPU per request stopped falling; `light`: the run's known rate needs under
   * {@link WARMUP_LIGHT_LOAD_SHARE} of a core at the cost reached; `cap`: `--client-warmup-ms` ran
   * out; `stopped`: Ctrl-C.
   */
  endedBy: 'plateau' | 'light' | 'cap' | 'stopped';
}

/**
 * Runs the client warm-up (see the module comment): a concurrency-{@link CLIENT_WARMUP_CONCURRENCY}
 * phase of at most `config.clientWarmupMs` against an in-process fixed-mode simulator, on the run's
 * own conversations, or for a streamed trace on copies of its first row with warm-up-only hash ids.
 * Records and bodies are written to a temporary folder that is removed afterwards. Stops early when
 * the per-request CPU stops falling or the run's stop signal fires.
 * @param ctx the run's context (tokenizer, synthesizer, adapter, dataset).
 * @param first the first row of a streamed trace (null when the dataset was loaded whole).
 * @returns counts, duration, the per-round CPU and why it ended.
 */
export async function warmUpClient(ctx: RunContext, first: StreamedTurn | null): Promise<ClientWarmupResult> {
  const t0 = performance.now();
  const sim = await startSimulator(
    {
      models: [...ctx.config.models],
      mode: 'fixed',
      ttftMs: 0,
      itlMs: WARMUP_ITL_MS,
      tokenizer: ctx.config.tokenizer,
    },
    { tokenizer: ctx.tokenizer },
  );
  const dir = await mkdtemp(join(tmpdir(), 'tokenload-client-warmup-'));
  const plateau = new AbortController();
  const demand = demandOf(ctx.config, ctx.dataset, ctx.stream !== null);
  const rateOf = demand?.unit === 'req/s' ? demand.value : null;
  const rounds = watchRounds(() => sim.stats().completed, plateau, rateOf);
  try {
    const config = warmupConfig(ctx.config);
    const dataset = warmupDataset(ctx.dataset, first);
    const limits: PhaseLimits = {
      stop: { durationNs: ctx.config.clientWarmupMs * 1e6 },
      onePass: false,
      load: config.load,
      prefill: null,
      writesTo: dir,
    };
    // Never the run's ideal prefix cache: nothing of the warm-up reaches the target's cache.
    const { idealCaches: _runCaches, ...runCtx } = ctx;
    const stopSignal = AbortSignal.any([ctx.env.stopSignal, plateau.signal]);
    // The warm-up's own phase messages (its stop, its connections) are not the run's: only warnings pass.
    const log = { info: () => undefined, warn: (message: string) => ctx.env.log.warn(message) };
    const env = { ...ctx.env, log, stopSignal };
    const warmCtx: RunContext = { ...runCtx, env, config, dataset, targets: [sim.url], stream: null };
    const result = await runPhase(
      warmCtx,
      'warmup',
      buildStrategy(config, dataset, limits, 'warmup'),
      limits,
    );
    const errors = result.summary.build().errorSummary.reduce((sum, e) => sum + e.count, 0);
    // The warm-up's prompts (other rows, or warm-up-only ids) say nothing about the run's block sizes.
    ctx.synthesizer.blocks.resetSizeConflicts();
    const endedBy = ctx.env.stopSignal.aborted ? 'stopped' : (rounds.endedBy ?? 'cap');
    const durationMs = performance.now() - t0;
    return {
      requests: result.recordCount,
      errors,
      durationMs,
      cpuMsPerRequest: rounds.perRequestMs,
      windowMeansMs: windowMeans(rounds.perRequestMs),
      endedBy,
    };
  } finally {
    rounds.stop();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * This process's CPU per request over each round of {@link WARMUP_ROUND_REQUESTS} completed
 * requests; aborts `plateau` once it has stopped falling (see the module comment), or once the run's
 * known rate (`ratePerS`, null when unknown) would keep the client under
 * {@link WARMUP_LIGHT_LOAD_SHARE} of a core at the latest round's cost.
 */
function watchRounds(
  completed: () => number,
  plateau: AbortController,
  ratePerS: number | null,
): { perRequestMs: number[]; stop: () => void; readonly endedBy: 'plateau' | 'light' | null } {
  const perRequestMs: number[] = [];
  let endedBy: 'plateau' | 'light' | null = null;
  let lastCpu = process.cpuUsage();
  let lastDone = completed();
  const timer = setInterval(() => {
    const done = completed();
    if (done - lastDone < WARMUP_ROUND_REQUESTS) return;
    const cpu = process.cpuUsage(lastCpu);
    lastCpu = process.cpuUsage();
    perRequestMs.push((cpu.user + cpu.system) / 1000 / (done - lastDone));
    lastDone = done;
    const latestMs = perRequestMs[perRequestMs.length - 1] as number;
    if (ratePerS !== null && (ratePerS * latestMs) / 1000 < WARMUP_LIGHT_LOAD_SHARE) endedBy = 'light';
    else if (hasLevelledOff(perRequestMs)) endedBy = 'plateau';
    if (endedBy !== null) plateau.abort();
  }, ROUND_CHECK_MS);
  return {
    perRequestMs,
    stop: () => clearInterval(timer),
    get endedBy() {
      return endedBy;
    },
  };
}

/**
 * Mean CPU per request of the window of {@link WARMUP_WINDOW_ROUNDS} rounds before the latest one and
 * of the latest one, ms; null before there are two windows.
 */
function windowMeans(perRequestMs: readonly number[]): [number, number] | null {
  const n = perRequestMs.length;
  if (n < 2 * WARMUP_WINDOW_ROUNDS) return null;
  const mean = (from: number): number =>
    perRequestMs.slice(from, from + WARMUP_WINDOW_ROUNDS).reduce((sum, ms) => sum + ms, 0) /
    WARMUP_WINDOW_ROUNDS;
  return [mean(n - 2 * WARMUP_WINDOW_ROUNDS), mean(n - WARMUP_WINDOW_ROUNDS)];
}

/** True when the latest window of rounds is less than {@link WARMUP_MIN_GAIN} cheaper than the one before. */
function hasLevelledOff(perRequestMs: readonly number[]): boolean {
  const means = windowMeans(perRequestMs);
  return means !== null && means[1] > (1 - WARMUP_MIN_GAIN) * means[0];
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
