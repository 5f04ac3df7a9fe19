/**
 * A minimal OpenAI-compatible server over llama.cpp (node-llama-cpp's prebuilt binary) for the
 * real-engine test: `GET /v1/models` and `POST /v1/chat/completions`, streamed (SSE, one chunk per
 * generated token, a final usage chunk with `stream_options.include_usage`) or not. Like a real
 * server it renders the messages with the model's own chat template (`tokenizer.chat_template` of the
 * GGUF, `add_generation_prompt`), tokenizes the result with the engine (special tokens parsed),
 * evaluates it on a context sequence that may already hold a prefix, and reports the engine's counts:
 * `usage.prompt_tokens` (the formatted prompt), `completion_tokens`, and
 * `prompt_tokens_details.cached_tokens` (prompt tokens it did not evaluate again). It generates
 * exactly `max_completion_tokens` (or `max_tokens`) tokens, never stopping at end-of-generation
 * tokens, since a random-weight model stops anywhere; control tokens are never sampled, so every
 * token has text.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Template } from '@huggingface/jinja';
import { getLlama, type Llama, LlamaLogLevel, type LlamaModel, type Token, TokenBias } from 'node-llama-cpp';
import { type Lease, SequencePool } from './sequence-pool.js';

/** How to start the server. */
export interface EngineServerOptions {
  modelPath: string;
  /** Name served by /v1/models and echoed in responses. */
  modelName: string;
  /** Context sequences (requests evaluated in parallel; more are queued). */
  sequences: number;
  /** KV cells per sequence, tokens: the longest prompt + output a request may have. */
  contextSize: number;
  /** Sampling seed (temperature 1, top-k 40). */
  seed: number;
}

/** A running server. */
export interface EngineServer {
  /** Base URL, `http://127.0.0.1:PORT` (the API is under `/v1`). */
  url: string;
  /** Model load time, ms (GGUF read, weights mapped, vocabulary built). */
  loadMs: number;
  /** The engine's tokens of `text`, special tokens parsed (as a server tokenizes a formatted prompt). */
  tokenize(text: string): number[];
  /** The engine's tokens of `messages` as a request's prompt: chat template applied, then tokenized. */
  promptTokens(messages: ReadonlyArray<{ role: string; content: string }>): number[];
  /** Stops listening, frees the context and the model. */
  close(): Promise<void>;
}

/** A chat request as this server reads it. */
interface ChatRequest {
  messages: Array<{ role: string; content: string }>;
  maxTokens: number;
  stream: boolean;
  includeUsage: boolean;
}

/** Engine counts of one request, as `usage` reports them. */
interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
}

class BadRequest extends Error {}

/** @throws {BadRequest} naming the field that is missing or malformed. */
function parseChatRequest(body: string): ChatRequest {
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new BadRequest('body is not JSON');
  }
  const messages = json.messages;
  if (!Array.isArray(messages) || messages.length === 0)
    throw new BadRequest('messages: expected a non-empty array');
  for (const m of messages as Array<Record<string, unknown>>) {
    if (typeof m.role !== 'string' || typeof m.content !== 'string') {
      throw new BadRequest('messages: each needs a string role and a string content');
    }
  }
  const maxTokens = json.max_completion_tokens ?? json.max_tokens;
  if (typeof maxTokens !== 'number' || !Number.isInteger(maxTokens) || maxTokens < 1) {
    throw new BadRequest('max_completion_tokens (or max_tokens): expected an integer >= 1');
  }
  const streamOptions = json.stream_options as { include_usage?: unknown } | undefined;
  return {
    messages: messages as ChatRequest['messages'],
    maxTokens,
    stream: json.stream === true,
    includeUsage: streamOptions?.include_usage === true,
  };
}

/** Text of generated tokens, held back while it ends inside a UTF-8 character (as servers do). */
class TextStream {
  private pending: Token[] = [];

  constructor(private readonly model: LlamaModel) {}

  /** The text completed by `token`, or '' while a multi-byte character is still open. */
  push(token: Token): string {
    this.pending.push(token);
    const text = this.model.detokenize(this.pending);
    if (text.endsWith('\uFFFD') && this.pending.length < 4) return '';
    this.pending = [];
    return text;
  }
}

/** One SSE event line for `payload`. */
function sse(payload: unknown): string {
  return `data: ${JSON.stringify(payload)}\n\n`;
}

interface Engine {
  model: LlamaModel;
  pool: SequencePool;
  template: Template;
  neverControl: TokenBias;
  options: EngineServerOptions;
}

/** The prompt's tokens: the messages rendered by the model's chat template, tokenized by the engine. */
function promptTokens(engine: Engine, messages: ChatRequest['messages']): Token[] {
  const text = engine.template.render({ messages, add_generation_prompt: true });
  return engine.model.tokenize(text, true);
}

/**
 * Evaluates the prompt after the lease's reused prefix and yields exactly `maxTokens` generated
 * tokens (sampled at temperature 1, top-k 40, seeded). Stops early when `signal` aborts (client gone).
 */
async function* generate(
  engine: Engine,
  lease: Lease,
  prompt: readonly Token[],
  maxTokens: number,
  signal: AbortSignal,
): AsyncGenerator<Token> {
  const tokens = lease.sequence.evaluate(prompt.slice(lease.reusedTokens), {
    temperature: 1,
    topK: 40,
    seed: engine.options.seed,
    tokenBias: engine.neverControl,
    yieldEogToken: true,
  });
  let count = 0;
  for await (const token of tokens) {
    if (signal.aborted) return;
    yield token;
    if (++count >= maxTokens) return;
  }
}

function chunkBase(id: string, model: string): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model };
}

function usageOf(promptTokenCount: number, completion: number, cached: number): Usage {
  return {
    prompt_tokens: promptTokenCount,
    completion_tokens: completion,
    total_tokens: promptTokenCount + completion,
    prompt_tokens_details: { cached_tokens: cached },
  };
}

/** Runs one chat completion on a leased sequence, streaming or not. */
async function complete(
  engine: Engine,
  req: ChatRequest,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  const prompt = promptTokens(engine, req.messages);
  if (prompt.length + req.maxTokens > engine.options.contextSize) {
    throw new BadRequest(`prompt ${prompt.length} + max tokens ${req.maxTokens} exceed the context size`);
  }
  const id = `chatcmpl-${Math.random().toString(36).slice(2)}`;
  const base = chunkBase(id, engine.options.modelName);
  const lease = await engine.pool.acquire(prompt);
  try {
    const text = new TextStream(engine.model);
    let completion = 0;
    let answer = '';
    if (req.stream) {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(
        sse({
          ...base,
          choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
        }),
      );
    }
    for await (const token of generate(engine, lease, prompt, req.maxTokens, signal)) {
      completion++;
      const piece = text.push(token);
      if (piece === '') continue;
      if (req.stream)
        res.write(sse({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] }));
      else answer += piece;
    }
    const usage = usageOf(prompt.length, completion, lease.reusedTokens);
    finish(res, req, base, answer, usage);
  } finally {
    engine.pool.release(lease.sequence);
  }
}

/** Ends the response: the last chunk with finish_reason, the usage chunk and [DONE]; or the JSON body. */
function finish(
  res: ServerResponse,
  req: ChatRequest,
  base: Record<string, unknown>,
  answer: string,
  usage: Usage,
): void {
  if (!req.stream) {
    const message = { role: 'assistant', content: answer };
    const body = {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, finish_reason: 'length' }],
      usage,
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    return;
  }
  res.write(sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] }));
  if (req.includeUsage) res.write(sse({ ...base, choices: [], usage }));
  res.end('data: [DONE]\n\n');
}

function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.end(sse({ error: { message, type: 'server_error' } }));
    return;
  }
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(
    JSON.stringify({ error: { message, type: status === 400 ? 'invalid_request_error' : 'server_error' } }),
  );
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

async function handle(engine: Engine, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'GET' && path === '/v1/models') {
    const data = [{ id: engine.options.modelName, object: 'model', created: 0, owned_by: 'tokenload-test' }];
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data }));
    return;
  }
  if (req.method !== 'POST' || path !== '/v1/chat/completions') {
    sendError(res, 404, `no route ${req.method} ${path}`);
    return;
  }
  const gone = new AbortController();
  res.on('close', () => gone.abort());
  try {
    await complete(engine, parseChatRequest(await readBody(req)), res, gone.signal);
  } catch (err) {
    sendError(res, err instanceof BadRequest ? 400 : 500, (err as Error).message);
  }
}

/** Sampler bias that never picks a control token (the special tokens of the chat template, EOS). */
function neverControlTokens(model: LlamaModel): TokenBias {
  const bias = new TokenBias(model.tokenizer);
  const types = model.fileInfo.metadata.tokenizer.ggml.token_type ?? [];
  types.forEach((type, id) => {
    if (type === 3) bias.set(id as Token, 'never');
  });
  return bias;
}

let binary: Promise<Llama> | undefined;

/**
 * llama.cpp through node-llama-cpp's prebuilt binary for this platform, CPU only, loaded once per
 * process; never built from source or downloaded (`build: 'never'`). Logs below errors are dropped.
 * @throws {Error} (rejects) when no prebuilt binary loads on this platform.
 */
export function engineBinary(): Promise<Llama> {
  binary ??= getLlama({ gpu: false, build: 'never', progressLogs: false, logLevel: LlamaLogLevel.error });
  return binary;
}

/**
 * Loads the model with {@link engineBinary} and serves it on 127.0.0.1 at an ephemeral port. The
 * context evaluates on one thread: on a small shared CI machine more threads than free cores make
 * llama.cpp's spinning workers slower, not faster.
 * @throws {Error} when the prebuilt binary cannot load on this platform or the model is unreadable.
 */
export async function startEngineServer(options: EngineServerOptions): Promise<EngineServer> {
  const start = performance.now();
  const llama = await engineBinary();
  const model = await llama.loadModel({ modelPath: options.modelPath });
  const loadMs = performance.now() - start;
  const context = await model.createContext({
    contextSize: options.contextSize,
    sequences: options.sequences,
    threads: 1,
  });
  const template = new Template(String(model.fileInfo.metadata.tokenizer.chat_template));
  const engine: Engine = {
    model,
    pool: new SequencePool(context),
    template,
    neverControl: neverControlTokens(model),
    options,
  };
  const server: Server = createServer((req, res) => void handle(engine, req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    loadMs,
    tokenize: (text) => model.tokenize(text, true),
    promptTokens: (messages) => promptTokens(engine, [...messages]),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await context.dispose();
      await model.dispose();
    },
  };
}
