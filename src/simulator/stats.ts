/**
 * Simulator counters and their Prometheus rendering with vLLM's metric names (vLLM docs,
 * "Production Metrics"), so tools that scrape a vLLM server's `/metrics` work unchanged.
 */
import type { KvPoolStats } from './kv-pool.js';

/** Mutable counters the request handlers update. */
export interface Counters {
  /** Generation and embeddings requests received (including rejected and faulted ones). */
  requests: number;
  /** Requests that ran to their last token. */
  completed: number;
  /** Requests answered with an HTTP error status (4xx/5xx, injected or not). */
  httpErrors: number;
  /** Requests whose stream was faulted mid-way (in-band error, truncation, reset). */
  midStreamFaults: number;
  /** Requests cancelled because the client went away. */
  clientAborts: number;
  /**
   * Prompt tokens processed: a generation request's once its prefill is done (at its first output
   * token, as vLLM counts them), an embeddings request's inputs when it is served.
   */
  promptTokens: number;
  /** Output tokens generated, counted one by one as the engine emits them (as vLLM counts them). */
  generationTokens: number;
}

/** Snapshot returned by `startSimulator(...).stats()`: the counters plus scheduler and cache state. */
export interface SimulatorStats extends Counters {
  /** Sequences running / waiting right now. */
  running: number;
  waiting: number;
  /** Engine steps run (0 in fixed mode). */
  steps: number;
  /** `fast` or `library` prompt tokenizer. */
  tokenizerEngine: string;
  /** Prefix-cache and KV-pool counters. */
  cache: KvPoolStats & {
    /** hitTokens / queryTokens, 0 when nothing was queried. */
    hitRatio: number;
  };
}

/** Fresh zeroed counters. */
export function newCounters(): Counters {
  return {
    requests: 0,
    completed: 0,
    httpErrors: 0,
    midStreamFaults: 0,
    clientAborts: 0,
    promptTokens: 0,
    generationTokens: 0,
  };
}

function metric(
  lines: string[],
  name: string,
  type: string,
  help: string,
  labels: string,
  value: number,
): void {
  lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`, `${name}{${labels}} ${value}`);
}

/** Prometheus text exposition (format 0.0.4) of a stats snapshot. */
export function renderMetrics(s: SimulatorStats, modelName: string): string {
  const l = `model_name="${modelName.replace(/["\\\n]/g, '_')}"`;
  const usage = s.cache.capacityBlocks === 0 ? 0 : s.cache.usedBlocks / s.cache.capacityBlocks;
  const lines: string[] = [];
  metric(lines, 'vllm:num_requests_running', 'gauge', 'Requests in model execution batches.', l, s.running);
  metric(lines, 'vllm:num_requests_waiting', 'gauge', 'Requests waiting to be processed.', l, s.waiting);
  metric(lines, 'vllm:gpu_cache_usage_perc', 'gauge', 'KV-cache usage, 1 means 100 percent.', l, usage);
  metric(lines, 'vllm:kv_cache_usage_perc', 'gauge', 'KV-cache usage, 1 means 100 percent.', l, usage);
  metric(
    lines,
    'vllm:prefix_cache_queries_total',
    'counter',
    'Prefix-cache queries, in tokens.',
    l,
    s.cache.queryTokens,
  );
  metric(
    lines,
    'vllm:prefix_cache_hits_total',
    'counter',
    'Prefix-cache hits, in tokens.',
    l,
    s.cache.hitTokens,
  );
  // Always 0: the engine reserves a sequence's prompt and output blocks when it admits it, so it
  // never has to preempt one (vLLM preempts when a running sequence outgrows the free blocks).
  metric(lines, 'vllm:num_preemptions_total', 'counter', 'Cumulative number of preemptions.', l, 0);
  metric(lines, 'vllm:prompt_tokens_total', 'counter', 'Prefill tokens processed.', l, s.promptTokens);
  metric(
    lines,
    'vllm:generation_tokens_total',
    'counter',
    'Generation tokens processed.',
    l,
    s.generationTokens,
  );
  metric(
    lines,
    'vllm:request_success_total',
    'counter',
    'Successfully processed requests.',
    `${l},finished_reason="length"`,
    s.completed,
  );
  return `${lines.join('\n')}\n`;
}
