/**
 * The simulator's one generation pipeline, shared by every generation route (chat, completions,
 * Responses API, TGI): fault draw, parse, model check, early faults, prompt tokenization, KV
 * capacity check and block keys, then a sequence submitted to the scheduler whose tokens a
 * {@link RouteWriter} writes in the route's {@link WireFormat}. A route only parses its requests and
 * shapes its responses.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { applyChatTemplate, type TemplateMessage } from './chat-template.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { checkModel, finishTimeline, type HandlerContext, serveRequest } from './handler.js';
import { chainedBlockKeys } from './kv-pool.js';
import { RequestError } from './request-parse.js';
import { RouteWriter } from './routes-writer.js';
import { newSequence, type Sequence, type SequenceSink } from './sequence.js';
import type { RouteMeta, RouteRequest, WireFormat, WireOptions } from './wire-format.js';

/** One generation API: its ground-truth label, request parser and wire format. */
export interface GenerateRoute<R extends RouteRequest = RouteRequest> {
  /** `endpoint` of its ground-truth lines. */
  endpoint: string;
  /**
   * Parses a request body.
   * @param defaultMaxTokens output length when the body names none.
   * @throws {RequestError} 400 for invalid JSON or fields.
   */
  parse(raw: string, defaultMaxTokens: number): R;
  /** The wire format of the response to `req`. */
  format(req: R, meta: RouteMeta, options: WireOptions): WireFormat;
  /** The API names no model (TGI): skip the configured-model check. */
  modelless?: boolean;
  /**
   * Its responses act only on a stream's after-N-tokens faults (`sse-error`, `truncate`, `reset`):
   * no role-only or multi-token chunks, and a non-streamed body ignores those faults (Responses
   * API, TGI). The ground truth still records the drawn fault.
   */
  streamFaultsOnly?: boolean;
}

const NO_FAULT: Fault = { kind: 'none' };

/** The prompt of a request kept after its prompt was tokenized. */
const TOKENIZED: RouteRequest['prompt'] = Object.freeze({ ids: [] as number[] });

/** The fault a response of `route` acts on (see {@link GenerateRoute.streamFaultsOnly}). */
function actedFault(route: Pick<GenerateRoute, 'streamFaultsOnly'>, fault: Fault, stream: boolean): Fault {
  if (route.streamFaultsOnly !== true) return fault;
  const afterTokens = fault.kind === 'sse-error' || fault.kind === 'truncate' || fault.kind === 'reset';
  return stream && afterTokens ? fault : NO_FAULT;
}

/** The text a prompt is tokenized from: its chat messages under the `chatTemplate` option, else its text. */
function promptText(
  ctx: HandlerContext,
  prompt: { text: string; messages?: readonly TemplateMessage[] },
): string {
  const template = ctx.opts.chatTemplate;
  return prompt.messages === undefined || template === 'none'
    ? prompt.text
    : applyChatTemplate(template, prompt.messages);
}

/**
 * `writer`, counting for `/metrics` as vLLM does: the prompt's tokens once its prefill is done (its
 * first output token), and every output token as it is generated (whether or not it reaches the
 * client).
 */
function countingSink(ctx: HandlerContext, promptTokens: number, writer: RouteWriter): SequenceSink {
  return {
    onToken(index, nowNs, batchSize) {
      if (index === 0) ctx.counters.promptTokens += promptTokens;
      ctx.counters.generationTokens++;
      writer.onToken(index, nowNs, batchSize);
    },
    onDone: (nowNs) => writer.onDone(nowNs),
    beginBurst: () => writer.beginBurst(),
    endBurst: () => writer.endBurst(),
  };
}

/**
 * Admits a parsed request: checks that prompt + output fit the KV pool, counts the prompt tokens,
 * starts the response and submits its sequence to the scheduler.
 * @throws {RequestError} 400 when the request can never fit the pool.
 */
function startGeneration<R extends RouteRequest>(
  ctx: HandlerContext,
  route: GenerateRoute<R>,
  res: ServerResponse,
  parsed: R,
  drawn: Fault,
  t: RequestTimeline,
): void {
  const ids =
    'ids' in parsed.prompt ? parsed.prompt.ids : ctx.tokenizer.encode(promptText(ctx, parsed.prompt));
  const output = ctx.opts.reasoningTokens + parsed.maxTokens;
  if (ctx.pool.blocksFor(ids.length + output) > ctx.pool.capacityBlocks) {
    throw new RequestError(400, `prompt (${ids.length} tokens) + output exceed the KV capacity`);
  }
  t.promptTokens = ids.length;
  const fault = actedFault(route, drawn, parsed.stream);
  const meta = { id: t.id, model: parsed.model, created: Math.floor(Date.now() / 1000) };
  const roleOnlyFirstChunk = ctx.opts.roleOnlyFirstChunk || fault.kind === 'role-chunk';
  // The writer and the wire format keep the request for the response's whole life (minutes for a
  // queued prompt); its prompt, up to ~1 MB of text, is not needed once tokenized.
  const req: R = { ...parsed, prompt: TOKENIZED };
  const format = route.format(req, meta, {
    roleOnlyFirstChunk,
    toolCalls: ctx.opts.toolCalls === 'when-tools',
  });
  const cancel = (s: Sequence): void => ctx.scheduler.cancel(s);
  const writer = new RouteWriter(res, format, req, ctx.opts, fault, t, cancel, (done) =>
    finishTimeline(ctx, done),
  );
  const keys = chainedBlockKeys(ids, ctx.pool.blockSize);
  const seq = newSequence(
    Number(t.id.slice(4)),
    ids.length,
    keys,
    output,
    countingSink(ctx, ids.length, writer),
  );
  writer.seq = seq;
  res.on('close', () => writer.abandon());
  writer.start();
  ctx.scheduler.submit(seq);
}

/** Serves one POST to a generation route. Never throws; every outcome is an HTTP response. */
export function handleRoute<R extends RouteRequest>(
  ctx: HandlerContext,
  route: GenerateRoute<R>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return serveRequest(
    ctx,
    {
      endpoint: route.endpoint,
      parse: (raw) => {
        const parsed = route.parse(raw, ctx.opts.defaultMaxTokens);
        if (route.modelless !== true) checkModel(ctx, parsed);
        return parsed;
      },
      serve: async (parsed, fault, t) => {
        if (fault.kind === 'slow-headers') await new Promise((r) => setTimeout(r, fault.delayMs));
        if (res.destroyed) return;
        startGeneration(ctx, route, res, parsed, fault, t);
      },
    },
    req,
    res,
  );
}
