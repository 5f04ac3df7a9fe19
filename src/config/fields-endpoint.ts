/**
 * Endpoint, request and tokenizer options: `--help`'s "Endpoint:" group.
 * Each field carries its AIPerf flag, unit, default and help text ({@link option}); field names
 * follow the flags with units in the names.
 */
import { z } from 'zod';
import { missingEndpointTypeMessage } from '../endpoint/aiperf-only.js';
import { ENDPOINT_TYPES } from '../endpoint/registry.js';
import { revisionProblem } from '../prompt/hf-cache.js';
import { option } from '../util/option-meta.js';
import {
  collectExtraInputs,
  collectHeaders,
  collectSessionHeaders,
  collectUrls,
  parseModels,
} from '../util/option-values.js';
import { positive } from './field-kinds.js';
import { waitForModelFields } from './fields-server.js';

/** Adds the issue of a `--tokenizer-revision` no branch, tag or commit can have. */
function checkRevision(revision: string, ctx: z.RefinementCtx<string>): void {
  const problem = revisionProblem(revision);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(revision)} ${problem}` });
}

/**
 * `--url` as given (a URL, a comma-separated list, or a list of either) → the normalized server
 * URLs, in order; a bad URL or a repeated server becomes the issue.
 */
const urlList = z.union([z.string(), z.array(z.string())]).transform((v, ctx) => {
  try {
    return (Array.isArray(v) ? v : [v]).reduce<string[]>((prev, item) => collectUrls(item, prev), []);
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: (err as Error).message });
    return z.NEVER;
  }
});

/** Endpoint, request and tokenizer options. */
/** `--url` when none is given. */
export const DEFAULT_URL = 'http://localhost:8000';

export const endpointFields = {
  /** `-m/--model`: one or more model names; requests round-robin over them. */
  models: option(
    z
      .array(z.string().min(1))
      .min(1)
      .transform((names) => names as [string, ...string[]]),
    {
      flag: 'model',
      short: '-m',
      unit: 'names',
      help: 'model name(s): a comma list or the flag repeated; requests round-robin',
      parse: (v, prev) => [...((prev as string[] | undefined) ?? []), ...parseModels(v)],
      repeatable: true,
    },
  ),
  /**
   * `-u/--url`: the servers, each an origin and optional base path (`http://` implied); several
   * (repeated or comma-separated) spread the sessions round-robin, every turn of a session on one.
   */
  url: option(urlList.default([DEFAULT_URL]), {
    flag: 'url',
    short: '-u',
    unit: 'url',
    help: 'server URL, http:// implied, a /v1 base understood; repeat or comma-separate for several replicas (sessions round-robin, each session on one server)',
    defaultText: DEFAULT_URL,
    parse: (v, prev) => collectUrls(v, prev as string[] | undefined),
    repeatable: true,
  }),
  /**
   * `--endpoint-type`: which API the requests use. AIPerf's types tokenload lacks are refused with
   * the reason (endpoint/aiperf-only.ts).
   */
  endpointType: option(z.enum(ENDPOINT_TYPES).default('chat'), {
    flag: 'endpoint-type',
    unit: 'type',
    help: 'endpoint API (docs/endpoints.md)',
    refuse: missingEndpointTypeMessage,
  }),
  /** `--endpoint`: URL path override (a leading `/` is added). */
  endpointPath: option(
    z
      .string()
      .min(1)
      .transform((p) => (p.startsWith('/') ? p : `/${p}`))
      .optional(),
    {
      flag: 'endpoint',
      unit: 'path',
      help: 'URL path override',
      defaultText: 'per endpoint type',
    },
  ),
  /** `--streaming`: stream responses (needed for TTFT, ITL). */
  streaming: option(z.boolean().default(false), {
    flag: 'streaming',
    help: 'stream responses (needed for TTFT, ITL, ICL)',
  }),
  /** `--request-timeout-seconds`: per-request time limit, s. */
  requestTimeoutSeconds: option(positive.default(21600), {
    flag: 'request-timeout-seconds',
    unit: 's',
    help: 'per-request time limit',
  }),
  /** `--extra-inputs`: fields merged into every request body. */
  extraInputs: option(z.record(z.string(), z.unknown()).default({}), {
    flag: 'extra-inputs',
    unit: 'kv',
    help: 'body field key:value or a JSON object; repeatable',
    parse: (v, prev) => collectExtraInputs(v, prev as Record<string, unknown> | undefined),
    repeatable: true,
  }),
  /** `-H/--header`: extra HTTP headers, name → value. */
  headers: option(z.record(z.string(), z.string()).default({}), {
    flag: 'header',
    short: '-H',
    unit: 'header',
    help: 'extra HTTP header "Name:Value"; repeatable (auth-like values are redacted in artifacts)',
    parse: (v, prev) => collectHeaders(v, prev as Record<string, string> | undefined),
    repeatable: true,
  }),
  /**
   * `--session-header`: more header names that carry each request's session id, besides
   * `X-Correlation-ID` and `X-Session-Affinity` (always sent); lower case, in the order given.
   */
  sessionHeaders: option(z.array(z.string().min(1)).default([]), {
    flag: 'session-header',
    unit: 'name',
    help: "also send the session id in this header (X-Correlation-ID and X-Session-Affinity always carry it); repeatable, e.g. X-Session-ID for vLLM's router",
    parse: (v, prev) => collectSessionHeaders(v, prev as string[] | undefined),
    repeatable: true,
  }),
  /** `--api-key`: sent as `Authorization: Bearer <key>`. */
  apiKey: option(z.string().optional(), {
    flag: 'api-key',
    unit: 'key',
    help: 'sent as Authorization: Bearer <key>',
    secret: true,
  }),
  /** `--use-legacy-max-tokens`: send `max_tokens` instead of `max_completion_tokens`. */
  useLegacyMaxTokens: option(z.boolean().default(false), {
    flag: 'use-legacy-max-tokens',
    help: 'send max_tokens instead of max_completion_tokens',
  }),
  /** `--use-server-token-count`: ISL/OSL from the server's usage object. */
  useServerTokenCount: option(z.boolean().default(false), {
    flag: 'use-server-token-count',
    help: 'take ISL/OSL from the server usage object',
  }),
  /**
   * `--per-chunk-usage`: ask for per-chunk usage (`continuous_usage_stats`), and let ITL divide by
   * OSL − (the first content chunk's running token count) instead of OSL − 1 (AIPerf).
   */
  perChunkUsage: option(z.boolean().default(false), {
    flag: 'per-chunk-usage',
    help: "ask for per-chunk usage (continuous_usage_stats); ITL then divides by OSL − the first chunk's tokens",
  }),
  /**
   * `--server-timing`: ask the server for its own timing of each request (`include_metrics: true`
   * in chat and completions bodies, vLLM's per-request metrics). Whatever timing a server sends
   * (vLLM `metrics`, llama.cpp `timings`) is recorded with or without it (record/server-timing.ts).
   */
  serverTiming: option(z.boolean().default(false), {
    flag: 'server-timing',
    help: "ask for the server's per-request timing (include_metrics: true, vLLM); recorded as server_* beside TTFT",
  }),
  /**
   * `--tokenizer`: a model folder, a tokenizer.json path, a Hugging Face model id (the local cache,
   * then the Hub: prompt/tokenizer-source.ts) or `builtin` (the bundled Qwen3); default the first
   * `--model` name.
   */
  tokenizer: option(z.string().min(1).optional(), {
    flag: 'tokenizer',
    unit: 'name',
    help: 'HF model id (local cache, then the Hub), model folder or tokenizer.json; builtin = the bundled Qwen3',
    defaultText: 'the --model name',
  }),
  /**
   * `--tokenizer-revision`: branch, tag or commit of a Hub tokenizer; a name that could not be a
   * ref file inside the cache (`..`, absolute, backslash: prompt/hf-cache.ts `revisionProblem`) is refused.
   */
  tokenizerRevision: option(z.string().min(1).superRefine(checkRevision).default('main'), {
    flag: 'tokenizer-revision',
    unit: 'rev',
    help: 'branch, tag or commit hash of a Hub tokenizer',
  }),
  /** `--apply-chat-template`: count ISL through the tokenizer's chat template, as the server counts it. */
  applyChatTemplate: option(z.boolean().default(false), {
    flag: 'apply-chat-template',
    help: "count ISL through the tokenizer's chat template (as the server does); synthesized prompts shrink by its tokens",
  }),
  /** `--random-seed`: seed of data and arrivals; drawn at random (and recorded) when unset. */
  randomSeed: option(z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(), {
    flag: 'random-seed',
    unit: 'n',
    help: 'seed for data and arrivals',
    defaultText: 'random, recorded',
  }),
  ...waitForModelFields,
};
