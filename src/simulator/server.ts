/**
 * The simulator's HTTP server (plain `node:http`): OpenAI-compatible `POST /v1/chat/completions`,
 * `POST /v1/completions`, `POST /v1/responses` and `POST /v1/embeddings`, TGI `POST /generate` and
 * `POST /generate_stream`, Anthropic `POST /v1/messages`, the rerank routes, OpenAI
 * `POST /v1/images/generations`, plus `GET /v1/models`, `GET /health` and `GET /metrics`; any
 * other POST outside `/v1/` (and a non-TGI body to `/generate`) is read as an unknown API's JSON
 * body (routes-any.ts), the `template` endpoint type's,  on a path with no API version (`/v1/`, `/v2/`) in it (a known
 * path behind a wrong prefix, `/wrong/v1/chat/completions`, stays a 404: a wrong `--url`); anything
 * else is a 404.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadTokenizer, type TextTokenizer } from '../prompt/tokenizer.js';
import { buildWordList } from '../prompt/word-list.js';
import { EngineScheduler } from './engine.js';
import { FaultPicker } from './faults.js';
import { FixedScheduler } from './fixed.js';
import { GroundTruthLog } from './ground-truth.js';
import { type HandlerContext, sendError } from './handler.js';
import { KvPool } from './kv-pool.js';
import { parseSimulatorOptions, type SimulatorOptions, type SimulatorOptionsInput } from './options.js';
import { handleAnyJson, orAnyJson } from './routes-any.js';
import { type CapturedRequest, RequestCapture } from './routes-capture.js';
import { handleEmbeddings } from './routes-embeddings.js';
import { type GenerateRoute, handleRoute } from './routes-generate.js';
import { handleImageGeneration } from './routes-images.js';
import { MESSAGES_ROUTE } from './routes-messages.js';
import { CHAT_ROUTE, COMPLETIONS_ROUTE } from './routes-openai.js';
import { handleRankings, type RankingsApi } from './routes-rankings.js';
import { RESPONSES_ROUTE } from './routes-responses.js';
import { TGI_GENERATE_ROUTE, TGI_STREAM_ROUTE } from './routes-tgi.js';
import type { Scheduler } from './sequence.js';
import { newCounters, renderMetrics, type SimulatorStats } from './stats.js';
import { driveWarmUp } from './warm-up.js';

export type { CapturedRequest } from './routes-capture.js';
export type { SimulatorStats } from './stats.js';

/** A running in-process simulator. */
export interface RunningSimulator {
  /** Base URL, e.g. `http://127.0.0.1:41234` (no trailing slash). */
  url: string;
  port: number;
  /** Stops listening, drops open requests and flushes the ground-truth log. */
  close(): Promise<void>;
  /** Counter snapshot. */
  stats(): SimulatorStats;
  /** POST bodies received, in arrival order; always empty unless started with `captureRequests`. */
  capturedRequests(): CapturedRequest[];
}

/** In-process-only switches (not simulator options: they are for tests, not the CLI). */
export interface SimulatorHooks {
  /** Keep every POST body in memory for {@link RunningSimulator.capturedRequests}. */
  captureRequests?: boolean;
  /** An already loaded tokenizer to use instead of loading `options.tokenizer` again. */
  tokenizer?: TextTokenizer;
}

/** Default name listed by `/v1/models` when no model names are configured. */
export const DEFAULT_MODEL_NAME = 'tokenload-sim';

function makeScheduler(opts: SimulatorOptions, pool: KvPool): { scheduler: Scheduler; steps: () => number } {
  if (opts.mode === 'fixed') return { scheduler: new FixedScheduler(opts, pool), steps: () => 0 };
  const engine = new EngineScheduler(opts, pool);
  return { scheduler: engine, steps: () => engine.stepCount() };
}

function snapshot(ctx: HandlerContext, steps: number): SimulatorStats {
  const cache = ctx.pool.stats();
  return {
    ...ctx.counters,
    running: ctx.scheduler.running(),
    waiting: ctx.scheduler.waiting(),
    steps,
    tokenizerEngine: ctx.tokenizer.engine,
    cache: { ...cache, hitRatio: cache.queryTokens === 0 ? 0 : cache.hitTokens / cache.queryTokens },
  };
}

function sendJson(res: ServerResponse, status: number, obj: unknown, type = 'application/json'): void {
  const body = typeof obj === 'string' ? obj : JSON.stringify(obj);
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function modelList(opts: SimulatorOptions): unknown {
  const names = opts.models.length > 0 ? opts.models : [DEFAULT_MODEL_NAME];
  const created = Math.floor(Date.now() / 1000);
  return {
    object: 'list',
    data: names.map((id) => ({ id, object: 'model', created, owned_by: 'tokenload' })),
  };
}

function serveMetrics(ctx: HandlerContext, steps: number, res: ServerResponse): void {
  const name = ctx.opts.models[0] ?? DEFAULT_MODEL_NAME;
  sendJson(res, 200, renderMetrics(snapshot(ctx, steps), name), 'text/plain; version=0.0.4');
}

/** The rerank routes, by `METHOD path`. */
const RANKINGS_ROUTES: ReadonlyMap<string, RankingsApi> = new Map<string, RankingsApi>([
  ['POST /rerank', 'tei'],
  ['POST /v1/rerank', 'cohere'],
  ['POST /v1/ranking', 'nim'],
]);

/** The generation routes, by `METHOD path`. */
const GENERATE_ROUTES: ReadonlyMap<string, GenerateRoute> = new Map<string, GenerateRoute>([
  ['POST /v1/chat/completions', CHAT_ROUTE],
  ['POST /v1/completions', COMPLETIONS_ROUTE],
  ['POST /v1/responses', RESPONSES_ROUTE],
  ['POST /v1/messages', MESSAGES_ROUTE],
  ['POST /generate', orAnyJson(TGI_GENERATE_ROUTE)],
  ['POST /generate_stream', TGI_STREAM_ROUTE],
]);

function route(
  ctx: HandlerContext,
  steps: () => number,
  capture: RequestCapture | null,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const path = (req.url ?? '/').split('?')[0] ?? '/';
  const key = `${req.method ?? ''} ${path}`;
  if (req.method === 'POST') capture?.capture(req, path);
  const generate = GENERATE_ROUTES.get(key);
  if (generate !== undefined) void handleRoute(ctx, generate, req, res);
  else if (key === 'POST /v1/embeddings') void handleEmbeddings(ctx, req, res);
  else if (key === 'POST /v1/images/generations') void handleImageGeneration(ctx, req, res);
  else if (RANKINGS_ROUTES.has(key))
    void handleRankings(ctx, RANKINGS_ROUTES.get(key) as RankingsApi, req, res);
  else if (key === 'GET /health') sendJson(res, 200, { status: 'ok' });
  else if (key === 'GET /v1/models') sendJson(res, 200, modelList(ctx.opts));
  else if (key === 'GET /metrics') serveMetrics(ctx, steps(), res);
  else if (req.method === 'POST' && !/\/v\d+\//.test(path)) void handleAnyJson(ctx, path, req, res);
  else {
    req.resume();
    sendError(res, 404, `no route for ${key}`);
  }
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/**
 * Warm-up before listening: encodes the words tokenload synthesizes prompts from (so the encoder's
 * piece cache already holds them: a cold cache runs BPE on every new word and made a warmed-up
 * simulator answer its first ~200 ms of a 1,000 requests/s replay several times slower), then
 * serves `opts.warmupMs` of internal requests on a throwaway fixed-mode instance (same tokenizer,
 * chunking and reasoning settings; no faults, no log) and closes it.
 */
async function warmUpSimulator(opts: SimulatorOptions, tokenizer: TextTokenizer): Promise<void> {
  try {
    buildWordList(tokenizer);
  } catch {
    // A vocabulary without enough one-token words: tokenload cannot synthesize prompts for it
    // either, so there is nothing to prime.
  }
  const spare = await startSimulator(
    {
      models: opts.models,
      tokenizer: opts.tokenizer,
      mode: 'fixed',
      ttftMs: 0,
      itlMs: 0,
      blockSize: opts.blockSize,
      tokensPerChunk: opts.tokensPerChunk,
      roleOnlyFirstChunk: opts.roleOnlyFirstChunk,
      reasoningTokens: opts.reasoningTokens,
    },
    { tokenizer },
  );
  try {
    await driveWarmUp(spare.url, opts.models[0] ?? DEFAULT_MODEL_NAME, opts.warmupMs);
  } finally {
    await spare.close();
  }
}

/**
 * Starts the simulator in this process.
 * @param input options (defaults from {@link SimulatorOptionsSchema}).
 * @param hooks in-process switches (request capture, an already loaded tokenizer). With
 *   `warmupMs` > 0 it first serves that long of internal requests on a throwaway instance.
 * @returns the bound URL and port, `close()` and `stats()`.
 * @throws {z.ZodError} on invalid options; {@link TokenizerLoadError} when the tokenizer is
 *   missing; the listen error (e.g. EADDRINUSE) when the port cannot be bound.
 */
export async function startSimulator(
  input: SimulatorOptionsInput = {},
  hooks: SimulatorHooks = {},
): Promise<RunningSimulator> {
  const opts = parseSimulatorOptions(input);
  // The exact encoder the client uses (fast cached path for Qwen/Llama 3-shaped tokenizers).
  const tokenizer = hooks.tokenizer ?? loadTokenizer(opts.tokenizer);
  if (opts.warmupMs > 0) await warmUpSimulator(opts, tokenizer);
  const pool = new KvPool(opts.cacheCapacityBlocks, opts.blockSize, opts.prefixCache);
  const { scheduler, steps } = makeScheduler(opts, pool);
  const ctx: HandlerContext = {
    opts,
    tokenizer,
    pool,
    scheduler,
    faults: new FaultPicker(opts),
    counters: newCounters(),
    log: opts.groundTruthLog === undefined ? null : new GroundTruthLog(opts.groundTruthLog),
  };
  const capture = hooks.captureRequests === true ? new RequestCapture() : null;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) =>
    route(ctx, steps, capture, req, res),
  );
  const port = await listen(server, opts.host, opts.port);
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    stats: () => snapshot(ctx, steps()),
    capturedRequests: () => capture?.requests() ?? [],
    close: async () => {
      scheduler.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      await ctx.log?.close();
    },
  };
}
