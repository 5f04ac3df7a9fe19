/**
 * Simulator options: one flat zod schema whose fields carry their flag, unit and help text
 * ({@link option}), so `tokenload simulate --help`, its flags and `--simulator-option` are all
 * derived from it.
 *
 * Engine defaults approximate Qwen3-0.6B served by vLLM on one H100 80GB (bf16); see
 * docs/simulator.md for the derivation and its limits.
 */
import { z } from 'zod';
import { BUILTIN_TOKENIZER } from '../prompt/tokenizer.js';
import { option } from '../util/option-meta.js';
import { CHAT_TEMPLATES } from './chat-template.js';

const rate = z.number().min(0).max(1);
const nonNegMs = z.number().min(0);

/**
 * How long a simulator started from the command line (`tokenload simulate`, `profile --simulator`)
 * warms up before it listens, ms; the schema's own default (0) serves library and test callers.
 */
export const CLI_SIMULATOR_WARMUP_MS = 1000;

/** Zod schema of every simulator option; `parse({})` yields the defaults. */
export const SimulatorOptionsSchema = z.strictObject({
  host: option(z.string().default('127.0.0.1'), {
    flag: 'host',
    unit: 'address',
    help: 'Interface to listen on.',
  }),
  port: option(z.number().int().min(0).max(65535).default(0), {
    flag: 'port',
    unit: 'port',
    help: 'TCP port; 0 picks a free port.',
  }),
  models: option(z.array(z.string()).default([]), {
    flag: 'models',
    unit: 'names',
    help: 'Model names served; empty accepts any name and lists "tokenload-sim".',
    defaultText: '(any)',
  }),
  tokenizer: option(z.string().default(BUILTIN_TOKENIZER), {
    flag: 'tokenizer',
    unit: 'spec',
    help: 'Tokenizer for prompt token ids (same syntax as the client --tokenizer).',
  }),
  mode: option(z.enum(['engine', 'fixed']).default('engine'), {
    flag: 'mode',
    unit: 'engine|fixed',
    help: 'engine: batched step model; fixed: constant TTFT/ITL per request, no batching.',
  }),
  ttftMs: option(nonNegMs.default(20), {
    flag: 'ttft-ms',
    unit: 'ms',
    help: 'Fixed mode: time to first token.',
  }),
  itlMs: option(nonNegMs.default(5), {
    flag: 'itl-ms',
    unit: 'ms',
    help: 'Fixed mode: gap between output tokens.',
  }),
  ttftPerUncachedTokenMs: option(nonNegMs.default(0), {
    flag: 'ttft-per-uncached-token-ms',
    unit: 'ms/token',
    help: 'Fixed mode: extra TTFT per prompt token not served from the prefix cache.',
  }),
  fixedMaxRunning: option(z.number().int().min(0).default(0), {
    flag: 'fixed-max-running',
    unit: 'requests',
    help: 'Fixed mode: most requests served at once; later ones wait in arrival order, their TTFT holding the wait (0: no limit).',
  }),
  stepBaseMs: option(nonNegMs.default(2), {
    flag: 'step-base-ms',
    unit: 'ms',
    help: 'Engine: fixed cost of one step (a).',
  }),
  prefillMsPerToken: option(nonNegMs.default(0.01), {
    flag: 'prefill-ms-per-token',
    unit: 'ms/token',
    help: 'Engine: cost per prefilled (uncached) prompt token in a step (b).',
  }),
  decodeMsPerSeq: option(nonNegMs.default(0.015), {
    flag: 'decode-ms-per-seq',
    unit: 'ms/sequence',
    help: 'Engine: cost per decoding sequence in a step (c).',
  }),
  decodeMsPerContextToken: option(nonNegMs.default(0), {
    flag: 'decode-ms-per-context-token',
    unit: 'ms/token',
    help: 'Engine: cost per context token (prompt + generated) of decoding sequences (d).',
  }),
  maxBatchedTokens: option(z.number().int().min(1).default(8192), {
    flag: 'max-batched-tokens',
    unit: 'tokens',
    help: 'Engine: token budget of one step (decodes count 1 each; chunked prefill fills the rest).',
  }),
  maxRunning: option(z.number().int().min(1).default(256), {
    flag: 'max-running',
    unit: 'sequences',
    help: 'Engine: most sequences admitted at once (vLLM max_num_seqs).',
  }),
  prefixCache: option(z.boolean().default(true), {
    flag: 'prefix-cache',
    unit: 'bool',
    help: 'Reuse KV blocks of shared prompt prefixes.',
  }),
  blockSize: option(z.number().int().min(1).default(16), {
    flag: 'block-size',
    unit: 'tokens',
    help: 'KV block size (hash granularity).',
  }),
  cacheCapacityBlocks: option(z.number().int().min(1).default(40_000), {
    flag: 'cache-capacity-blocks',
    unit: 'blocks',
    help: 'KV pool size; running requests hold blocks, unreferenced ones are evicted LRU.',
  }),
  defaultMaxTokens: option(z.number().int().min(1).default(16), {
    flag: 'default-max-tokens',
    unit: 'tokens',
    help: 'Output length when the request has neither max_completion_tokens nor max_tokens.',
  }),
  tokensPerChunk: option(z.number().int().min(1).default(1), {
    flag: 'tokens-per-chunk',
    unit: 'tokens',
    help: 'Output tokens per SSE chunk.',
  }),
  roleOnlyFirstChunk: option(z.boolean().default(false), {
    flag: 'role-only-first-chunk',
    unit: 'bool',
    help: 'Send a {role, content:null} chunk before the first token.',
  }),
  chatTemplate: option(z.enum(CHAT_TEMPLATES).default('none'), {
    flag: 'chat-template',
    unit: 'none|chatml',
    help: 'Chat prompts: none joins the message texts (prompt_tokens = the client count); chatml wraps them as Qwen ChatML, so prompt_tokens counts the template as a real server does.',
  }),
  serverTiming: option(z.enum(['none', 'vllm', 'llamacpp']).default('none'), {
    flag: 'server-timing',
    unit: 'none|vllm|llamacpp',
    help: "Chat/completions: the server's own timing of each request from the model (queue wait, prefill, first token, decode) on the final usage chunk or body, as vLLM's metrics object or llama.cpp's timings object.",
  }),
  reasoningTokens: option(z.number().int().min(0).default(0), {
    flag: 'reasoning-tokens',
    unit: 'tokens',
    help: 'reasoning_content tokens streamed before the content tokens (added to completion_tokens).',
  }),
  toolCalls: option(z.enum(['off', 'when-tools']).default('off'), {
    flag: 'tool-calls',
    unit: 'off|when-tools',
    help: 'Chat: when-tools answers a request that declares tools with one call of its first tool instead of content text: id call_ plus 12 hex digits of the prompt text\'s SHA-256, arguments {"text":"<the output words>"}; streamed, the first chunk carries the id, type and name with the first argument piece, the others the rest of the arguments, finish_reason tool_calls.',
  }),
  faultRate429: option(rate.default(0), {
    flag: 'fault-rate-429',
    unit: 'fraction',
    help: 'Share of requests answered 429 + Retry-After.',
  }),
  faultRate500: option(rate.default(0), {
    flag: 'fault-rate-500',
    unit: 'fraction',
    help: 'Share of requests answered 500.',
  }),
  faultRate503: option(rate.default(0), {
    flag: 'fault-rate-503',
    unit: 'fraction',
    help: 'Share of requests answered 503.',
  }),
  faultRateSseError: option(rate.default(0), {
    flag: 'fault-rate-sse-error',
    unit: 'fraction',
    help: 'Share of streams that send an in-band error event after --fault-after-tokens tokens.',
  }),
  faultRateTruncate: option(rate.default(0), {
    flag: 'fault-rate-truncate',
    unit: 'fraction',
    help: 'Share of responses ended cleanly after --fault-after-tokens tokens, without finish or [DONE].',
  }),
  faultRateReset: option(rate.default(0), {
    flag: 'fault-rate-reset',
    unit: 'fraction',
    help: 'Share of responses whose TCP connection is reset after --fault-after-tokens tokens.',
  }),
  faultRateHang: option(rate.default(0), {
    flag: 'fault-rate-hang',
    unit: 'fraction',
    help: 'Share of requests that never get headers (until the client gives up).',
  }),
  faultRateSlowHeaders: option(rate.default(0), {
    flag: 'fault-rate-slow-headers',
    unit: 'fraction',
    help: 'Share of requests delayed by --slow-headers-ms before processing starts.',
  }),
  faultAfterTokens: option(z.number().int().min(0).default(2), {
    flag: 'fault-after-tokens',
    unit: 'tokens',
    help: 'Output tokens sent before an sse-error, truncate or reset fault fires.',
  }),
  slowHeadersMs: option(nonNegMs.default(1000), {
    flag: 'slow-headers-ms',
    unit: 'ms',
    help: 'Delay of the slow-headers fault.',
  }),
  coldStartRequests: option(z.number().int().min(0).default(0), {
    flag: 'cold-start-requests',
    unit: 'requests',
    help: 'A cold engine: the first N requests served start --cold-start-ms later (as a slow-headers fault), every later one at once (0: warm from the start).',
  }),
  coldStartMs: option(nonNegMs.default(1500), {
    flag: 'cold-start-ms',
    unit: 'ms',
    help: 'Delay of each of the --cold-start-requests first requests.',
  }),
  retryAfterS: option(z.number().int().min(0).default(1), {
    flag: 'retry-after-s',
    unit: 's',
    help: 'Retry-After header value on 429/503.',
  }),
  seed: option(z.number().int().default(0), {
    flag: 'seed',
    unit: 'integer',
    help: 'Seed of the fault draws (deterministic by arrival order).',
  }),
  groundTruthLog: option(z.string().optional(), {
    flag: 'ground-truth-log',
    unit: 'path',
    help: 'JSONL file with one line of server-side epoch-ns timings per request.',
    defaultText: '(off)',
  }),
  warmupMs: option(nonNegMs.default(0), {
    flag: 'warmup-ms',
    unit: 'ms',
    help: 'Before listening, serve internal requests for this long on a throwaway fixed-mode instance, so the first real requests meet compiled code (no effect on the cache or counters).',
  }),
});

/** Parsed simulator options (all defaults applied). */
export type SimulatorOptions = z.infer<typeof SimulatorOptionsSchema>;

/** Input accepted by `startSimulator` / `spawnSimulator`: any subset, defaults fill the rest. */
export type SimulatorOptionsInput = z.input<typeof SimulatorOptionsSchema>;

/**
 * Parses and defaults simulator options.
 * @throws {z.ZodError} naming the invalid field.
 */
export function parseSimulatorOptions(input: SimulatorOptionsInput = {}): SimulatorOptions {
  return SimulatorOptionsSchema.parse(input);
}
