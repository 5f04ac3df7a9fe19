/**
 * `tokenload probe`: a handful of small requests that show what an endpoint does differently (see
 * types.ts for every finding), sent one after another so that each sees the server idle, while one
 * idle connection is watched for the keep-alive timeout. Bodies are built by the endpoint adapter a
 * run uses; answers are read by the measuring client's decoder and record builder (exchange.ts).
 */
import type { ChatMessage } from '../dataset/types.js';
import { adapterFor } from '../endpoint/registry.js';
import { type EndpointAdapter, endpointPathFor, requestPathFor, routeUrlFor } from '../endpoint/types.js';
import { ConfigError } from '../errors.js';
import { preflight } from '../preflight/preflight.js';
import { loadTokenizer } from '../prompt/tokenizer.js';
import { resolveTokenizerSource } from '../prompt/tokenizer-source.js';
import type { RequestIdentity } from '../record/types.js';
import { sessionIdHeaders } from '../request/headers.js';
import { parseOptions } from '../util/option-meta.js';
import { sessionHeaderClash } from '../util/option-values.js';
import { packageVersion } from '../util/package-root.js';
import { type ExchangeResult, type ExchangeSpec, exchange } from './exchange.js';
import { deriveFindings, type ProbeContext, type ProbeExchanges } from './findings.js';
import { errorText, recordedError } from './findings-stream.js';
import { idleKeepAlive } from './keep-alive.js';
import { type ProbeOptions, type ProbeOptionsInput, ProbeOptionsSchema } from './options.js';
import { recommend } from './recommend.js';
import type { ProbeReport, ProbeRequestLine, RecordedError } from './types.js';

/**
 * The user message of the probe's generation requests: 35 tokens with the bundled Qwen3 vocabulary,
 * so that a prefix cache with 16-token blocks can hold two of its blocks when it is sent again.
 */
export const PROBE_TEXT =
  'This is a short request from tokenload probe. Please answer with a few plain words about rivers, mountains and the sea, then stop. Thank you for your help today.';

/** The tool of the tool-call check, asked for by name. */
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather of a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** The probe's options with its one server (`--url`). */
type ProbeSetup = Omit<ProbeOptions, 'url'> & { url: string };

/** What every probe request shares. */
interface Sender {
  options: ProbeSetup;
  adapter: EndpointAdapter;
  headers: Record<string, string>;
  lines: ProbeRequestLine[];
}

function identity(options: ProbeSetup, name: string, maxTokens: number): RequestIdentity {
  return {
    conversationId: 'probe',
    turnIndex: 0,
    sessionNum: 0,
    xRequestId: crypto.randomUUID(),
    xCorrelationId: `probe-${name}`,
    model: options.models[0],
    scheduledNs: null,
    inputTokens: null,
    requestedOutputTokens: maxTokens,
  };
}

/** How a generation request differs from the plain streamed one. */
interface GenerationVariant {
  name: string;
  stream: boolean;
  perChunkUsage?: boolean;
  maxTokens?: number;
  messages?: ChatMessage[];
  extra?: Record<string, unknown>;
}

function generationSpec(s: Sender, v: GenerationVariant): ExchangeSpec {
  const { options, adapter } = s;
  const maxTokens = v.maxTokens ?? options.maxTokens;
  const stream = v.stream && adapter.streamable;
  const body = adapter.buildBody({
    model: options.models[0],
    messages: v.messages ?? [{ role: 'user', content: PROBE_TEXT }],
    stream,
    maxTokens,
    useLegacyMaxTokens: options.useLegacyMaxTokens,
    perChunkUsage: v.perChunkUsage ?? false,
    extraInputs: { ...options.extraInputs, ...v.extra },
  });
  const ids = identity(options, v.name, maxTokens);
  return {
    method: 'POST',
    url: requestUrl(options, adapter, stream),
    headers: {
      ...s.headers,
      'x-request-id': ids.xRequestId,
      ...sessionIdHeaders(options.sessionHeaders, ids.xCorrelationId),
    },
    body: JSON.stringify(body),
    generation: { identity: ids, adapter, stream },
    timeoutMs: options.timeoutSeconds * 1000,
  };
}

/** Where a generation request is posted (`--url`'s base path joined as a run joins it). */
function requestUrl(options: ProbeSetup, adapter: EndpointAdapter, stream: boolean): string {
  const path = endpointPathFor(adapter, stream, options.endpointPath);
  return `${new URL(options.url).origin}${requestPathFor(options.url, path)}`;
}

/** `/v1/models` beside the endpoint, derived as a run derives it (`routeUrlFor`). */
function modelsUrlOf(options: ProbeSetup, adapter: EndpointAdapter): string {
  return routeUrlFor(options.url, '/v1/models', endpointPathFor(adapter, true, options.endpointPath));
}

function outcomeOf(r: ExchangeResult): string {
  const error = recordedError(r);
  if (error !== null) return errorText(error);
  if (r.failure !== null) return r.failure;
  return r.record === null && r.status !== 200 ? `HTTP ${r.status}` : 'ok';
}

async function send(s: Sender, name: string, spec: ExchangeSpec): Promise<ExchangeResult> {
  const r = await exchange(spec);
  s.lines.push({
    name,
    method: spec.method,
    url: spec.url,
    status: r.status,
    outcome: outcomeOf(r),
    ms: r.ms,
  });
  return r;
}

function routeSpec(s: Sender, method: 'GET' | 'POST', url: string, body?: unknown): ExchangeSpec {
  return {
    method,
    url,
    headers: s.headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    timeoutMs: s.options.timeoutSeconds * 1000,
  };
}

/** The routes beside generation: models (under `--url`'s base path), metrics and tokenize (at the origin). */
async function probeRoutes(s: Sender): Promise<Pick<ProbeExchanges, 'models' | 'metrics' | 'tokenize'>> {
  const { url } = s.options;
  const origin = new URL(url).origin;
  const models = await send(s, 'models', routeSpec(s, 'GET', modelsUrlOf(s.options, s.adapter)));
  const metrics = await send(s, 'metrics', routeSpec(s, 'GET', `${origin}/metrics`));
  const tokenize = await send(
    s,
    'tokenize',
    routeSpec(s, 'POST', `${origin}/tokenize`, {
      model: s.options.models[0],
      prompt: PROBE_TEXT,
      add_special_tokens: false,
    }),
  );
  return { models, metrics, tokenize };
}

function isChatLike(s: Sender): boolean {
  return s.adapter.name === 'chat' || s.adapter.name === 'completions';
}

/** The generation requests; after a first one that got no answer at all, the others are skipped. */
async function probeGeneration(
  s: Sender,
): Promise<Omit<ProbeExchanges, 'models' | 'metrics' | 'tokenize' | 'idle'>> {
  const out: Omit<ProbeExchanges, 'models' | 'metrics' | 'tokenize' | 'idle'> = {
    stream: null,
    continuous: null,
    whole: null,
    tools: null,
    bad: null,
    skipped: null,
  };
  if (s.adapter.streamable) {
    out.stream = await send(s, 'stream', generationSpec(s, { name: 'stream', stream: true }));
    if (out.stream.status === null) {
      out.skipped = `the first generation request got no answer (${out.stream.failure})`;
      return out;
    }
    if (isChatLike(s))
      out.continuous = await send(
        s,
        'stream + continuous usage',
        generationSpec(s, { name: 'continuous', stream: true, perChunkUsage: true }),
      );
  }
  out.whole = await send(s, 'not streamed', generationSpec(s, { name: 'whole', stream: false }));
  if (s.adapter.name === 'chat') out.tools = await send(s, 'tools', generationSpec(s, toolsVariant()));
  out.bad = await send(s, 'bad request', generationSpec(s, badVariant(s.adapter)));
  return out;
}

/** A request every server should refuse (`badRequestOf` names what is wrong with it). */
function badVariant(adapter: EndpointAdapter): GenerationVariant {
  if (adapter.name === 'embeddings') return { name: 'bad', stream: false, extra: { input: [] } };
  return { name: 'bad', stream: true, maxTokens: 0 };
}

function toolsVariant(): GenerationVariant {
  return {
    name: 'tools',
    stream: true,
    messages: [{ role: 'user', content: 'What is the weather in Paris? Use the tool.' }],
    extra: { tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather' } } },
  };
}

/** How the first generation request failed; null when it succeeded (or none was sent). */
function firstFailure(ex: ProbeExchanges): RecordedError | null {
  const first = ex.stream ?? ex.whole;
  return first === null ? null : recordedError(first);
}

function authHeaders(options: ProbeSetup): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  return headers;
}

/**
 * Probes the endpoint `input` names and returns what it found.
 * @throws {ConfigError} for a bad option; {TokenizerLoadError} when `--tokenizer` cannot be loaded;
 *   {ServerUnreachableError} when nothing answers at `--url`. An endpoint that answers with errors
 *   is a finding, not a throw.
 */
export async function runProbe(input: ProbeOptionsInput): Promise<ProbeReport> {
  const started = performance.now();
  const parsed = parseOptions(ProbeOptionsSchema, input, (m, o) => new ConfigError(m, o));
  const [url, ...more] = parsed.url;
  if (url === undefined || more.length > 0)
    throw new ConfigError(
      `probe one server at a time: got ${parsed.url.length} (${parsed.url.join(', ')}).`,
      '--url',
    );
  const clash = sessionHeaderClash(parsed.headers, parsed.sessionHeaders);
  if (clash !== null) throw new ConfigError(clash, '--session-header');
  const options: ProbeSetup = { ...parsed, url };
  const spec = options.tokenizer ?? options.models[0];
  const source = await resolveTokenizerSource(spec, {
    revision: options.tokenizerRevision,
    env: process.env,
    label:
      options.tokenizer === undefined ? `--model ${spec} (the default --tokenizer)` : `--tokenizer ${spec}`,
  });
  const tokenizer = loadTokenizer(source.path);
  const adapter = adapterFor(options.endpointType, { extraInputs: options.extraInputs });
  const headers = authHeaders(options);
  await preflight([options.url], {
    headers,
    endpointPath: endpointPathFor(adapter, true, options.endpointPath),
  });
  const s: Sender = { options, adapter, headers, lines: [] };
  const modelsUrl = modelsUrlOf(options, adapter);
  const idle =
    options.keepAliveIdleSeconds > 0 ? idleKeepAlive(modelsUrl, headers, options.keepAliveIdleSeconds) : null;
  const routes = await probeRoutes(s);
  const generation = await probeGeneration(s);
  const ex: ProbeExchanges = { ...routes, ...generation, idle: idle === null ? null : await idle };
  const ctx: ProbeContext = {
    adapter,
    model: options.models[0],
    clientTokens: tokenizer.count(PROBE_TEXT),
    tokenizer: tokenizer.name,
    idleS: options.keepAliveIdleSeconds,
    maxTokens: options.maxTokens,
  };
  const findings = deriveFindings(ctx, ex);
  return {
    tokenload_version: packageVersion(),
    target: {
      url: options.url,
      request_url: requestUrl(options, adapter, adapter.streamable),
      model: ctx.model,
      endpoint_type: adapter.name,
      tokenizer: tokenizer.name,
    },
    findings,
    recommendations: recommend(findings, ctx, firstFailure(ex)),
    requests: s.lines,
    duration_ms: Math.round(performance.now() - started),
  };
}
