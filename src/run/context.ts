/**
 * What a run hands its phases: the injected environment ({@link RunEnv}) and everything the phases
 * share ({@link RunContext}). Its own module so that the run's modules (`profile`, `phase`,
 * `client-warmup`, `finish`) import it without importing each other in a cycle.
 */
import type { ClientChoice, PhaseClient } from '../client/worker-factory.js';
import type { RunPlan } from '../config/plan.js';
import type { IdealPrefixCache } from '../dataset/prefix-chain.js';
import type { Dataset, StreamedTurn, TraceStream } from '../dataset/types.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import type { ClientFloor, SendingThreads } from '../health/client-floor.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import type { TokenizerSource } from '../prompt/tokenizer-source.js';
import type { ServerMetricsScraper } from '../server-metrics/scraper.js';
import type { Clock } from '../timing/clock.js';
import type { RunEnv } from '../util/run-env.js';

/** What every phase shares. */
export interface RunContext {
  /** The run's plan: its configuration resolved into typed parts. */
  config: RunPlan;
  env: RunEnv;
  dataset: Dataset;
  tokenizer: TextTokenizer;
  /** Where the tokenizer came from (the summary's `tokenizer` section); absent in tests that inject one. */
  tokenizerSource?: TokenizerSource;
  /** `--apply-chat-template`: counts prompts through the tokenizer's chat template; null or absent without. */
  templateCounter?: TemplateCounter | null;
  synthesizer: PromptSynthesizer;
  /**
   * The text of `--system-prompt`, or of `--system-prompt-file` (read once at start-up), put on every
   * request (request/system-prompt.ts); null or absent: none.
   */
  systemPrompt?: string | null;
  adapter: EndpointAdapter;
  /** The servers' base URLs (origin + optional base path), in `--url` order (request/servers.ts). */
  targets: readonly string[];
  /** The trace read while it replays (fixed schedule with `--trace-streaming`); null when loaded whole. */
  stream: TraceStream | null;
  /** The first row of a streamed trace (read before the run starts); null otherwise. */
  firstRow?: StreamedTurn | null;
  /**
   * The run's clock: the strategies' schedules, `--request-cancellation-delay` timers, the
   * `--benchmark-duration` cut-off and every grace period run on it (a `RealClock` with
   * `--timing-precision` in a run; a `VirtualClock` in tests).
   */
  clock: Clock;
  /** Opens a phase's HTTP client (`createClient`: single-process or worker pool, by `--workers`). */
  openClient(choice: ClientChoice): PhaseClient;
  /**
   * Measures the floor the profiling phase's client health is judged against, before its first send
   * (`measureClientFloor`: about a quarter second on `clock`; also on the worker threads of `threads`
   * when they send).
   */
  measureFloor(clock: Clock, signal: AbortSignal, threads?: SendingThreads): Promise<ClientFloor>;
  /**
   * The run's ideal prefix caches, one per server (as {@link RunContext.targets}: each server has its
   * own KV cache), shared by the phases that send to the servers (warmup and profiling, in send
   * order); absent for the client warm-up, which never reaches them.
   */
  idealCaches?: readonly IdealPrefixCache[];
  /** The `/metrics` scraper of the run (`--server-metrics`); absent or null when off. */
  serverMetrics?: ServerMetricsScraper | null;
  /** The DCGM scraper of the run (`--gpu-telemetry`); absent or null when off. */
  gpuTelemetry?: ServerMetricsScraper | null;
}
