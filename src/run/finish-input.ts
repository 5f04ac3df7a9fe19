/**
 * What the end of a run is given ({@link FinishInput}) and the facts read from it by the console
 * lines, the warnings and the summary sections alike.
 */

import type { RunPlan } from '../config/plan.js';
import type { ProfileConfig } from '../config/resolve.js';
import type { SkipCounts } from '../dataset/types.js';
import type { RunInfo } from '../export/summary-json.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TokenizerSection } from '../prompt/tokenizer-source.js';
import type { ScrapeReport } from '../server-metrics/scraper.js';
import type { ShardReport } from '../shard/start-at.js';
import type { LoadStrategy, PacingReport, ReplayReport, StrategyReport } from '../timing/types.js';
import type { PhaseResult } from './phase.js';
import type { TraceCheckNotes } from './trace-check-run.js';
import type { UntilCachedReport } from './warmup-rounds.js';
import type { WorkersChoice } from './workers-auto.js';

/** Inputs of `finishRun` (./finish.ts). */
export interface FinishInput {
  config: RunPlan;
  /** The profiling phase (it always runs; interrupted before start-up ended, it is empty). */
  profiling: PhaseResult;
  warmup: PhaseResult | null;
  /** What `--warmup-until-cached` saw; null or absent without it. */
  warmupUntilCached?: UntilCachedReport | null;
  strategy: LoadStrategy;
  synthesizer: PromptSynthesizer;
  /** Rows of `--input-file` the loader dropped, by reason; null without an input file. */
  inputSkipped?: SkipCounts | null;
  /** Where the requests were posted, e.g. `http://127.0.0.1:8000/v1/chat/completions`. */
  requestUrl: string;
  /** Where the tokenizer came from: the summary's `tokenizer` section and a console line. */
  tokenizer?: TokenizerSection;
  /**
   * `--apply-chat-template`: synthesized prompts of the profiling phase whose target length was below
   * the template's own tokens (their text is empty; their ISL is the template's).
   */
  template?: { shorterThanTemplate: number };
  /** What the `/metrics` scraper gathered; null or absent with `--no-server-metrics`. */
  serverMetrics?: ScrapeReport | null;
  /** What the DCGM scraper gathered; null or absent without `--gpu-telemetry`. */
  gpuTelemetry?: ScrapeReport | null;
  /** The models the servers' `/v1/models` listed before the run; null or absent when unknown. */
  servedModels?: readonly string[] | null;
  /** The configuration as asked, written as `input_config` (a shard runs its share: shard/shard-run.ts). */
  askedConfig: ProfileConfig;
  /** A sharded or `--start-at` run: the summary's `shard` section, its console line and warnings (shard/start-at.ts). */
  shard?: ShardReport | null;
  /**
   * Warnings about the run's input and options, already logged when found (`--streaming` on an
   * endpoint that cannot stream, prompts beyond any context window); the summary keeps them too.
   */
  inputWarnings?: readonly string[];
  /** The trace check and `--developer-role-as-system` (the summary's `trace_check`); absent: neither ran. */
  traceCheck?: TraceCheckNotes | null;
  /** The summary's `run_info` (its `benchmark_id` made when the run started). */
  runInfo: RunInfo;
  /** What `--workers auto` chose (the summary's `client_workers`); null or absent with a number. */
  workersChoice?: WorkersChoice | null;
}

/** Requests sent to the servers: the warmup phase's and the profiling phase's. */
export function sentCount(input: FinishInput): number {
  return input.profiling.load.issued + (input.warmup?.load.issued ?? 0);
}

/** The error that stopped reading a streamed trace; null for other strategies and a clean read. */
export function feedErrorOf(load: StrategyReport): Error | null {
  return load.kind === 'fixed_schedule' ? replayError(load.replay) : null;
}

export function replayError(replay: ReplayReport): Error | null {
  const err = replay.feedError;
  if (err === null || err === undefined) return null;
  return err instanceof Error ? err : new Error(String(err));
}

/** The pacing facts of a request-rate run; null for other strategies. */
export function pacingOf(load: StrategyReport): PacingReport | null {
  return load.kind === 'request_rate' ? load.pacing : null;
}
