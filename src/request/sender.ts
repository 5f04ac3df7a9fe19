/**
 * The dispatch function the load strategy calls for each turn: build the prompt lazily, apply the
 * context mode, build the body, send, then hand the record on. A failure anywhere in one request
 * becomes that request's recorded error; it never escapes into the scheduler.
 */
import { randomUUID } from 'node:crypto';
import type { HttpClient } from '../client/types.js';
import type { RunPlan } from '../config/plan.js';
import type { IdealPrefixCache } from '../dataset/prefix-chain.js';
import { type ChatMessage, type Turn, treeIdOf } from '../dataset/types.js';
import type { EndpointAdapter } from '../endpoint/types.js';
import type { PromptSynthesizer } from '../prompt/synthesizer.js';
import type { TemplateCounter } from '../prompt/template-count.js';
import type { TextTokenizer } from '../prompt/tokenizer.js';
import { failedRecord } from '../record/failure.js';
import { emptyRecord } from '../record/raw-record.js';
import type { RawRecord, RequestIdentity } from '../record/types.js';
import { type Clock, monotonicNowNs } from '../timing/clock.js';
import type { RampedSemaphore } from '../timing/ramped-semaphore.js';
import type { Dispatch, DispatchItem, PreparedSend } from '../timing/types.js';
import { rngFromKey } from '../util/rng.js';
import { runSteps, type Steps } from '../util/steps.js';
import { bodyWithPromptBytes } from './body-bytes.js';
import { ConversationContext, type LiveReply } from './conversation-context.js';
import { requestHeaders } from './headers.js';
import { payloadMaxTokens } from './payload-input.js';
import { type PromptFacts, promptFacts } from './prompt-facts.js';
import { type ServerTarget, serverOfSession } from './servers.js';
import { carriesSystemPrompt, promptWithSystem } from './system-prompt.js';
import { ownMessages, resolveTurnPrompt, type TurnPrompt, withPromptText } from './turn-prompt.js';

/** What the sender needs. */
export interface SenderDeps {
  config: RunPlan;
  client: HttpClient;
  adapter: EndpointAdapter;
  /** The run's servers with their request paths, in `--url` order (request/servers.ts). */
  servers: readonly ServerTarget[];
  synthesizer: PromptSynthesizer;
  tokenizer: TextTokenizer;
  /** `--apply-chat-template`: counts prompts through the chat template; null or absent without. */
  templateCounter?: TemplateCounter | null;
  /** `--system-prompt` (or the text of `--system-prompt-file`): put on every request; null or absent: none. */
  systemPrompt?: string | null;
  /** The run's clock; `--request-cancellation-delay` is timed on it. */
  clock: Clock;
  /** Aborts in-flight requests (recorded as cancelled). */
  cancelSignal: AbortSignal;
  /**
   * Called with each body (serialized JSON, the UTF-8 bytes sent; not to be changed) right after it
   * was handed to the client, so a request prepared but never sent (a stop) is not listed in
   * inputs.json; the returned promise is awaited after the request completes, bounding buffered writes.
   */
  onBody(conversationId: string, turnIndex: number, body: Uint8Array): Promise<void> | undefined;
  /** Called right before each request is sent. */
  onSend?(): void;
  /** Called with each finished record. */
  onRecord(raw: RawRecord): Promise<void> | void;
  /**
   * The run's ideal prefix caches, one per server (index as {@link SenderDeps.servers}): each
   * synthesized prompt is admitted to its server's as it is sent, and its record gets
   * `idealCachedTokens`. Absent for sends that never reach the target (the client warm-up).
   */
  idealCaches?: readonly IdealPrefixCache[];
  /**
   * The phase's prefill gate (`--prefill-concurrency`): a request takes a slot before the client
   * begins it and gives it back at its first token, or at its end when no token came (a failure, a
   * cancellation, a non-streamed answer), so a slot is never kept. Absent: no gate.
   */
  prefillGate?: RampedSemaphore;
}

/**
 * Creates the dispatcher: `prepare` (or `prepareInSteps`) builds the body ahead of time, `send`
 * sends it.
 */
export function createSender(deps: SenderDeps): Dispatch {
  const context = new ConversationContext();
  const cancelPicker = createCancellationPicker(deps.config);
  let requestNum = 0;
  function* prepareInSteps(item: DispatchItem): Steps<PreparedSend> {
    const model = deps.config.models[requestNum++ % deps.config.models.length] as string;
    const built = yield* prepareOne(deps, context, item, model, cancelPicker());
    return {
      send: async (scheduledNs?: number, concurrencyWaitNs?: number) => {
        const raw = await built.send(scheduledNs);
        if (concurrencyWaitNs !== undefined) raw.concurrencyWaitNs = concurrencyWaitNs;
        await deps.onRecord(raw);
      },
    };
  }
  return {
    prepare: (item: DispatchItem): PreparedSend => runSteps(prepareInSteps(item)),
    prepareInSteps,
    reserveConnections: (count: number, dueNs?: number): void =>
      deps.client.reserveConnections?.(count, dueNs),
  };
}

/**
 * AIPerf `--request-cancellation-rate` / `--request-cancellation-delay`: each request is cancelled
 * with probability rate/100 (seeded, reproducible), `delay` seconds after it was sent; the record is
 * then a cancellation (code 499), never a success. Returns the cancel delay in ms, or null.
 */
function createCancellationPicker(config: Pick<RunPlan, 'cancellation' | 'randomSeed'>): () => number | null {
  const { cancellation } = config;
  if (cancellation === null) return () => null;
  const next = rngFromKey(`${config.randomSeed}:cancellation`);
  const { ratePct, delayMs } = cancellation;
  return () => ((next() / 4294967296) * 100 < ratePct ? delayMs : null);
}

/**
 * The cancel signal of one request sent now: the run's, plus its own timer on `clock` when it was
 * picked for cancellation `cancelAfterMs` after the send.
 */
function requestSignal(
  runSignal: AbortSignal,
  cancelAfterMs: number | null,
  clock: Clock,
): { signal: AbortSignal; disarm(): void } {
  if (cancelAfterMs === null) return { signal: runSignal, disarm: () => undefined };
  const own = new AbortController();
  const disarm = clock.callAt(clock.nowNs() + cancelAfterMs * 1e6, () => own.abort());
  return { signal: AbortSignal.any([runSignal, own.signal]), disarm };
}

/**
 * Whether a request's cancellation came from the run's signal (the duration cut-off's or Ctrl-C's
 * grace ran out), not its own `--request-cancellation-rate` timer: the combined signal carries the
 * reason of whichever fired first.
 */
function endedByRun(runSignal: AbortSignal, requestSignal: AbortSignal): boolean {
  return runSignal.aborted && requestSignal.reason === runSignal.reason;
}

/** Who a request is, before its prompt is built (`inputTokens` is filled in then). */
function identityOf(
  { conversation, turn, sessionNum, scheduledNs }: DispatchItem,
  model: string,
  serverUrl: string,
  adapter: EndpointAdapter,
): RequestIdentity {
  // A branch of a Bailian tree replay is recorded under its tree's root id (dataset/types.ts).
  const conversationId = treeIdOf(conversation);
  return {
    conversationId,
    ...(conversation.id === conversationId ? {} : { sessionId: conversation.id }),
    turnIndex: turn.index,
    sessionNum,
    xRequestId: randomUUID(),
    xCorrelationId: conversationId,
    model,
    ...(turn.requestType === undefined ? {} : { requestType: turn.requestType }),
    scheduledNs,
    inputTokens: null,
    // An endpoint that generates no tokens is sent no output length (embeddings), and none is expected.
    requestedOutputTokens: adapter.generatesTokens ? (turn.maxTokens ?? null) : null,
    serverUrl,
  };
}

/**
 * A verbatim body is sent as written, so its record names what it asks for: its own `model` (not
 * `--model`) and its own max tokens (not the turn's), as the server sees them.
 */
function verbatimIdentity(
  identity: RequestIdentity,
  body: Record<string, unknown>,
  adapter: EndpointAdapter,
): void {
  if (typeof body.model === 'string') identity.model = body.model;
  identity.requestedOutputTokens = adapter.generatesTokens ? payloadMaxTokens(body) : null;
}

/**
 * Whether the request asks for an event stream: a verbatim body's own `stream: true` (`--streaming`
 * does not change a body sent as written), else `--streaming` on an endpoint that can stream. The
 * answer's content type decides how it is read either way (client/record-builder.ts).
 */
function streamsAnswer(deps: SenderDeps, payload: Record<string, unknown> | undefined): boolean {
  if (payload !== undefined) return payload.stream === true;
  return deps.config.streaming && deps.adapter.streamable;
}

/** A request built and waiting for its send: who it is, where it goes, and its body. */
interface BuiltRequest {
  identity: RequestIdentity;
  /** Index of its server in `SenderDeps.servers`. */
  server: number;
  target: ServerTarget;
  prompt: TurnPrompt;
  facts: PromptFacts;
  /** The body's UTF-8 bytes; null once handed to the client (the one copy is then the client's). */
  bodyBytes: Uint8Array | null;
  headers: Record<string, string>;
}

/**
 * Builds one turn's prompt and body, filling its token counts into `identity`. Large prompts keep
 * one copy, the body's UTF-8 bytes, built here (ahead of the send time when the strategy prepares
 * ahead): the send neither serializes nor encodes, and the bytes live outside the JS heap (the
 * collector never copies them); the client and inputs.json share this one buffer.
 * @throws whatever building the prompt or the body throws (the caller records it as a failed request).
 */
function* buildRequest(
  deps: SenderDeps,
  context: ConversationContext,
  item: DispatchItem,
  model: string,
  identity: RequestIdentity,
): Steps<Pick<BuiltRequest, 'prompt' | 'facts' | 'bodyBytes'>> {
  const { conversation, turn } = item;
  const mode = conversation.contextMode;
  const key = `${conversation.id}:${turn.index}`;
  const counter = deps.templateCounter ?? null;
  const resolved = yield* resolveTurnPrompt(turn, key, deps.synthesizer, deps.tokenizer, counter);
  const system = deps.systemPrompt ?? null;
  const prompt =
    system !== null && carriesSystemPrompt(mode, turn.index)
      ? promptWithSystem(resolved, system, deps.tokenizer, counter)
      : resolved;
  identity.inputTokens = prompt.inputTokens;
  if (counter !== null && prompt.textTokens !== null) identity.textInputTokens = prompt.textTokens;
  if (prompt.payload !== undefined) verbatimIdentity(identity, prompt.payload, deps.adapter);
  const messages =
    prompt.payload === undefined ? context.messagesFor(historyKey(item), mode, prompt.messages) : null;
  const facts = promptFacts(turn, prompt, messages, context.historyOf(historyKey(item), mode), key, counter);
  if (facts.layout !== undefined) identity.promptLayout = facts.layout;
  if (facts.sentTokens !== undefined) identity.sentPromptTokens = facts.sentTokens;
  return { prompt, facts, bodyBytes: encodeBody(deps, turn, prompt, messages, model) };
}

function* prepareOne(
  deps: SenderDeps,
  context: ConversationContext,
  item: DispatchItem,
  model: string,
  cancelAfterMs: number | null,
): Steps<{ send(scheduledNs?: number): Promise<RawRecord> }> {
  const server = serverOfSession(item.sessionNum, deps.servers.length);
  const target = deps.servers[server] as ServerTarget;
  const identity = identityOf(item, model, target.url, deps.adapter);
  let request: BuiltRequest;
  try {
    const built = yield* buildRequest(deps, context, item, model, identity);
    const headers = requestHeaders(deps.config, identity.xRequestId, identity.xCorrelationId);
    request = { identity, server, target, headers, ...built };
  } catch (err) {
    const failed = unbuiltRecord(identity, err);
    // Counted as sent, as its record is counted done: the run's in-flight count stays balanced.
    return {
      send: () => {
        deps.onSend?.();
        return Promise.resolve(failed);
      },
    };
  }
  return {
    send: (scheduledNs?: number) => sendBuilt(deps, context, item, request, cancelAfterMs, scheduledNs),
  };
}

/** Sends a built request now and returns its record, once its body is logged and its turn remembered. */
async function sendBuilt(
  deps: SenderDeps,
  context: ConversationContext,
  item: DispatchItem,
  request: BuiltRequest,
  cancelAfterMs: number | null,
  scheduledNs: number | undefined,
): Promise<RawRecord> {
  const { identity, server, facts } = request;
  if (scheduledNs !== undefined) identity.scheduledNs = scheduledNs;
  deps.onSend?.();
  const gate = deps.prefillGate === undefined ? null : await takePrefillSlot(deps.prefillGate);
  const cancel = requestSignal(deps.cancelSignal, cancelAfterMs, deps.clock);
  const bytes = request.bodyBytes ?? EMPTY_BODY;
  request.bodyBytes = null;
  const sendingNs = monotonicNowNs();
  const pending = deps.client.send({
    identity,
    path: request.target.path,
    server,
    headers: request.headers,
    body: bytes,
    stream: streamsAnswer(deps, request.prompt.payload),
    adapter: deps.adapter,
    timeoutMs: deps.config.requestTimeoutSeconds * 1000,
    signal: cancel.signal,
    ...(gate === null ? {} : { onFirstToken: gate.release }),
  });
  // A failed write is kept by the file and reported when it closes; it must not fail this request.
  const written = deps.onBody(item.conversation.id, item.turn.index, bytes)?.catch(ignore);
  // Only queued here; the cache's work is done once the response is in (prefix-chain.ts).
  const admitted =
    facts.cacheBlocks === null ? undefined : deps.idealCaches?.[server]?.admit(facts.cacheBlocks, sendingNs);
  const raw = await pending;
  cancel.disarm();
  if (raw.cancelled && endedByRun(deps.cancelSignal, cancel.signal)) raw.censored = true;
  if (gate !== null) {
    gate.release();
    raw.prefillWaitNs = gate.waitNs;
  }
  const ideal = admitted?.settle(raw.sentNs);
  if (ideal !== undefined && ideal !== null) raw.idealCachedTokens = ideal.tokens;
  rememberTurn(deps.tokenizer, context, item, request.prompt, raw);
  await written;
  return raw;
}

/** A prefill slot held by one request: how long it waited for it, and its release (once). */
interface PrefillSlot {
  waitNs: number;
  release: () => void;
}

/**
 * Waits for a slot of `gate`; its wait is from the call to the moment a release handed it the slot
 * (0 when one was free), not counting the time until this continuation runs (the client's own lag).
 * The returned release gives the slot back once, whichever calls it first.
 */
async function takePrefillSlot(gate: RampedSemaphore): Promise<PrefillSlot> {
  const t0 = monotonicNowNs();
  const handedNs = await new Promise<number>((resolve) => gate.take(() => resolve(monotonicNowNs())));
  let held = true;
  return {
    waitNs: Math.max(0, handedNs - t0),
    release: () => {
      if (!held) return;
      held = false;
      gate.release();
    },
  };
}

/**
 * Keeps what a sent turn contributes to its conversation's later requests (its messages, the live
 * reply, with their client token counts) in `context`.
 */
function rememberTurn(
  tokenizer: TextTokenizer,
  context: ConversationContext,
  item: DispatchItem,
  prompt: TurnPrompt,
  raw: RawRecord,
): void {
  const { conversation, turn } = item;
  const mode = conversation.contextMode;
  const isLast = turn.index === conversation.turns.length - 1;
  const turnMessages = mode === 'message_array_with_responses' || isLast ? [] : ownMessages(prompt);
  const needsReply = mode === 'deltas_without_responses' && !isLast && raw.error === null;
  const reply = needsReply ? liveReply(tokenizer, raw) : null;
  const own = { messages: turnMessages, tokens: prompt.textTokens, messageTokens: prompt.messageTokens };
  context.remember(historyKey(item), mode, own, reply, isLast);
}

/**
 * The key of a session's history: its conversation and its `session_num`, so that a dataset
 * conversation sent again (a file's sessions cycled to reach a request count) starts a history of
 * its own, even while the earlier pass's last turn is still in flight or its next one is built ahead.
 */
function historyKey({ conversation, sessionNum }: DispatchItem): string {
  return `${conversation.id}#${sessionNum}`;
}

/**
 * The live reply of a request, for `deltas_without_responses` history: its content text (a reply
 * with tool calls: without their text) with its client token count, and its tool calls. The history's
 * client count is the messages' content, as a `messages` row's is: tool calls are not counted.
 */
function liveReply(tokenizer: TextTokenizer, raw: RawRecord): LiveReply {
  const tools = raw.toolReply;
  if (tools !== undefined) {
    const text = tools.content;
    return { text, tokens: text === '' ? 0 : tokenizer.count(text), toolCalls: tools.toolCalls };
  }
  let text = '';
  for (const c of raw.chunks) text += c.text;
  return { text, tokens: tokenizer.count(text) };
}

/**
 * The body's UTF-8 bytes: a verbatim payload as stored, else the adapter's body for `messages` (the
 * turn's messages in context), a synthesized prompt written straight from its pieces (body-bytes.ts).
 */
function encodeBody(
  deps: SenderDeps,
  turn: Turn,
  prompt: TurnPrompt,
  messages: ChatMessage[] | null,
  model: string,
): Buffer {
  if (prompt.payload !== undefined || messages === null) {
    return Buffer.from(JSON.stringify(prompt.payload), 'utf8');
  }
  const body = buildBody(deps, model, messages, turn);
  if (prompt.pieces === undefined) return Buffer.from(JSON.stringify(body), 'utf8');
  return bodyWithPromptBytes(body, prompt.pieces, (text) =>
    buildBody(deps, model, withPromptText(messages, text), turn),
  );
}

function buildBody(
  deps: SenderDeps,
  model: string,
  messages: ChatMessage[],
  turn: Pick<Turn, 'maxTokens' | 'extra' | 'namedTexts'>,
): Record<string, unknown> {
  const { maxTokens, extra: turnExtra, namedTexts } = turn;
  return deps.adapter.buildBody({
    model,
    messages,
    stream: deps.config.streaming && deps.adapter.streamable,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    useLegacyMaxTokens: deps.config.useLegacyMaxTokens,
    perChunkUsage: deps.config.perChunkUsage,
    serverTiming: deps.config.serverTiming,
    extraInputs: deps.config.extraInputs,
    ...(turnExtra === undefined ? {} : { turnExtra }),
    ...(namedTexts === undefined ? {} : { namedTexts }),
    ...(deps.systemPrompt == null ? {} : { systemPrompt: deps.systemPrompt }),
  });
}

/** The body of a prepared request sent twice (never done by the strategies; sent empty, not re-built). */
const EMPTY_BODY = new Uint8Array(0);

/** Swallows a rejection whose error is kept and reported elsewhere (one shared function, no closure per request). */
const ignore = (): undefined => undefined;

/**
 * The record of a request that could not even be built (e.g. an impossible hash_ids layout): a
 * `client_error` typed by the exception's name, recorded, never thrown.
 */
function unbuiltRecord(identity: RequestIdentity, err: unknown): RawRecord {
  const now = monotonicNowNs();
  const raw = emptyRecord(identity);
  raw.startNs = now;
  const type = err instanceof Error ? err.name : 'Error';
  const message = err instanceof Error ? err.message : String(err);
  return failedRecord(raw, type, message, now);
}
