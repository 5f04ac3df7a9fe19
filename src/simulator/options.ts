/**
 * Simulator options: one flat zod schema (so the CLI can map each field to one flag) plus
 * {@link SIMULATOR_OPTION_DOCS}, the table `tokenload simulate --help` is built from.
 *
 * Engine defaults approximate Qwen3-0.6B served by vLLM on one H100 80GB (bf16); see
 * docs/simulator.md for the derivation and its limits.
 */
import { z } from 'zod';

const rate = z.number().min(0).max(1);
const nonNegMs = z.number().min(0);

/** Zod schema of every simulator option; `parse({})` yields the defaults. */
export const SimulatorOptionsSchema = z.object({
  host: z.string().default('127.0.0.1'),
  port: z.number().int().min(0).max(65535).default(0),
  models: z.array(z.string()).default([]),
  tokenizer: z.string().default('builtin:qwen3'),
  mode: z.enum(['engine', 'fixed']).default('engine'),
  ttftMs: nonNegMs.default(20),
  itlMs: nonNegMs.default(5),
  ttftPerUncachedTokenMs: nonNegMs.default(0),
  stepBaseMs: nonNegMs.default(2),
  prefillMsPerToken: nonNegMs.default(0.01),
  decodeMsPerSeq: nonNegMs.default(0.015),
  decodeMsPerContextToken: nonNegMs.default(0),
  maxBatchedTokens: z.number().int().min(1).default(8192),
  maxRunning: z.number().int().min(1).default(256),
  prefixCache: z.boolean().default(true),
  blockSize: z.number().int().min(1).default(16),
  cacheCapacityBlocks: z.number().int().min(1).default(40_000),
  defaultMaxTokens: z.number().int().min(1).default(16),
  tokensPerChunk: z.number().int().min(1).default(1),
  roleOnlyFirstChunk: z.boolean().default(false),
  reasoningTokens: z.number().int().min(0).default(0),
  faultRate429: rate.default(0),
  faultRate500: rate.default(0),
  faultRate503: rate.default(0),
  faultRateSseError: rate.default(0),
  faultRateTruncate: rate.default(0),
  faultRateReset: rate.default(0),
  faultRateHang: rate.default(0),
  faultRateSlowHeaders: rate.default(0),
  faultAfterTokens: z.number().int().min(0).default(2),
  slowHeadersMs: nonNegMs.default(1000),
  retryAfterS: z.number().int().min(0).default(1),
  seed: z.number().int().default(0),
  groundTruthLog: z.string().optional(),
  warmupMs: nonNegMs.default(0),
});

/** Parsed simulator options (all defaults applied). */
export type SimulatorOptions = z.infer<typeof SimulatorOptionsSchema>;

/** Input accepted by `startSimulator` / `spawnSimulator`: any subset, defaults fill the rest. */
export type SimulatorOptionsInput = z.input<typeof SimulatorOptionsSchema>;

/** One documented option: its schema key, unit, default (as shown in help) and meaning. */
export interface SimulatorOptionDoc {
  name: keyof SimulatorOptions;
  unit: string;
  default: string;
  description: string;
}

/** Help text for every option, in display order. */
export const SIMULATOR_OPTION_DOCS: readonly SimulatorOptionDoc[] = [
  { name: 'host', unit: 'address', default: '127.0.0.1', description: 'Interface to listen on.' },
  { name: 'port', unit: 'port', default: '0', description: 'TCP port; 0 picks a free port.' },
  {
    name: 'models',
    unit: 'names',
    default: '(any)',
    description: 'Model names served; empty accepts any name and lists "tokenload-sim".',
  },
  {
    name: 'tokenizer',
    unit: 'spec',
    default: 'builtin:qwen3',
    description: 'Tokenizer for prompt token ids (same syntax as the client --tokenizer).',
  },
  {
    name: 'mode',
    unit: 'engine|fixed',
    default: 'engine',
    description: 'engine: batched step model; fixed: constant TTFT/ITL per request, no batching.',
  },
  { name: 'ttftMs', unit: 'ms', default: '20', description: 'Fixed mode: time to first token.' },
  { name: 'itlMs', unit: 'ms', default: '5', description: 'Fixed mode: gap between output tokens.' },
  {
    name: 'ttftPerUncachedTokenMs',
    unit: 'ms/token',
    default: '0',
    description: 'Fixed mode: extra TTFT per prompt token not served from the prefix cache.',
  },
  { name: 'stepBaseMs', unit: 'ms', default: '2', description: 'Engine: fixed cost of one step (a).' },
  {
    name: 'prefillMsPerToken',
    unit: 'ms/token',
    default: '0.01',
    description: 'Engine: cost per prefilled (uncached) prompt token in a step (b).',
  },
  {
    name: 'decodeMsPerSeq',
    unit: 'ms/sequence',
    default: '0.015',
    description: 'Engine: cost per decoding sequence in a step (c).',
  },
  {
    name: 'decodeMsPerContextToken',
    unit: 'ms/token',
    default: '0',
    description: 'Engine: cost per context token (prompt + generated) of decoding sequences (d).',
  },
  {
    name: 'maxBatchedTokens',
    unit: 'tokens',
    default: '8192',
    description: 'Engine: token budget of one step (decodes count 1 each; chunked prefill fills the rest).',
  },
  {
    name: 'maxRunning',
    unit: 'sequences',
    default: '256',
    description: 'Engine: most sequences admitted at once (vLLM max_num_seqs).',
  },
  {
    name: 'prefixCache',
    unit: 'bool',
    default: 'true',
    description: 'Reuse KV blocks of shared prompt prefixes.',
  },
  { name: 'blockSize', unit: 'tokens', default: '16', description: 'KV block size (hash granularity).' },
  {
    name: 'cacheCapacityBlocks',
    unit: 'blocks',
    default: '40000',
    description: 'KV pool size; running requests hold blocks, unreferenced ones are evicted LRU.',
  },
  {
    name: 'defaultMaxTokens',
    unit: 'tokens',
    default: '16',
    description: 'Output length when the request has neither max_completion_tokens nor max_tokens.',
  },
  { name: 'tokensPerChunk', unit: 'tokens', default: '1', description: 'Output tokens per SSE chunk.' },
  {
    name: 'roleOnlyFirstChunk',
    unit: 'bool',
    default: 'false',
    description: 'Send a {role, content:null} chunk before the first token.',
  },
  {
    name: 'reasoningTokens',
    unit: 'tokens',
    default: '0',
    description: 'reasoning_content tokens streamed before the content tokens (added to completion_tokens).',
  },
  {
    name: 'faultRate429',
    unit: 'fraction',
    default: '0',
    description: 'Share of requests answered 429 + Retry-After.',
  },
  { name: 'faultRate500', unit: 'fraction', default: '0', description: 'Share of requests answered 500.' },
  { name: 'faultRate503', unit: 'fraction', default: '0', description: 'Share of requests answered 503.' },
  {
    name: 'faultRateSseError',
    unit: 'fraction',
    default: '0',
    description: 'Share of streams that send an in-band error event after faultAfterTokens tokens.',
  },
  {
    name: 'faultRateTruncate',
    unit: 'fraction',
    default: '0',
    description: 'Share of responses ended cleanly after faultAfterTokens tokens, without finish or [DONE].',
  },
  {
    name: 'faultRateReset',
    unit: 'fraction',
    default: '0',
    description: 'Share of responses whose TCP connection is reset after faultAfterTokens tokens.',
  },
  {
    name: 'faultRateHang',
    unit: 'fraction',
    default: '0',
    description: 'Share of requests that never get headers (until the client gives up).',
  },
  {
    name: 'faultRateSlowHeaders',
    unit: 'fraction',
    default: '0',
    description: 'Share of requests delayed by slowHeadersMs before processing starts.',
  },
  {
    name: 'faultAfterTokens',
    unit: 'tokens',
    default: '2',
    description: 'Output tokens sent before an sse-error, truncate or reset fault fires.',
  },
  { name: 'slowHeadersMs', unit: 'ms', default: '1000', description: 'Delay of the slow-headers fault.' },
  { name: 'retryAfterS', unit: 's', default: '1', description: 'Retry-After header value on 429/503.' },
  {
    name: 'seed',
    unit: 'integer',
    default: '0',
    description: 'Seed of the fault draws (deterministic by arrival order).',
  },
  {
    name: 'groundTruthLog',
    unit: 'path',
    default: '(off)',
    description: 'JSONL file with one line of server-side epoch-ns timings per request.',
  },
  {
    name: 'warmupMs',
    unit: 'ms',
    default: '0 (1000 for simulate and profile --simulator)',
    description:
      'Before listening, serve internal requests for this long on a throwaway fixed-mode instance, so the first real requests meet compiled code (no effect on the cache or counters).',
  },
];

/**
 * Parses and defaults simulator options.
 * @throws {z.ZodError} naming the invalid field.
 */
export function parseSimulatorOptions(input: SimulatorOptionsInput = {}): SimulatorOptions {
  return SimulatorOptionsSchema.parse(input);
}
