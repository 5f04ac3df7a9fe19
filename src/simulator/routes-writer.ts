/**
 * Response writer of the simulator's extra generation routes (Responses API, TGI): the same token
 * timing as the chat/completions `ResponseWriter`, with the wire shapes delegated to a
 * {@link WireFormat}. Of the faults, the after-N-tokens ones apply to streams (in-band error event,
 * clean truncation, TCP reset); the chat-only ones (role chunk, multi-token chunks) do not. Tokens
 * the scheduler delivers as one burst (same due time) are gathered and written with one `write`.
 */
import type { ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import { BurstWriter } from './burst-writer.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { outputText, type UsageBody, usageBody } from './responses.js';
import type { Sequence, SequenceSink } from './sequence.js';
import { startStream } from './stream-start.js';

/** A generation request as the extra routes parse it. */
export interface RouteRequest {
  model: string;
  stream: boolean;
  /** Output tokens to generate (content only; reasoning tokens come on top). */
  maxTokens: number;
  /** Prompt text, tokenized by the simulator's tokenizer. */
  promptText: string;
}

/** One streamed piece: tokens [from, to) of the output, all reasoning or all content. */
export interface WireDelta {
  text: string;
  reasoning: boolean;
  /** The piece holding the last output token. */
  last: boolean;
  /** Output tokens sent so far, this piece included. */
  sentTokens: number;
  /** The whole response, on the last piece only (TGI puts it in its final token event). */
  end?: WireEnd;
}

/** What a finished response reports. */
export interface WireEnd {
  /** Content text (reasoning excluded). */
  text: string;
  reasoning: string;
  usage: UsageBody;
}

/** The wire shapes of one API. Each event is a complete SSE frame (`event:`/`data:` lines + blank line). */
export interface WireFormat {
  /** Frames sent right after the stream's headers. */
  start(meta: RouteMeta): string[];
  /** Frames of one streamed piece. */
  delta(meta: RouteMeta, piece: WireDelta): string[];
  /** Frames after the last piece (usage, terminal event, sentinel). */
  end(meta: RouteMeta, end: WireEnd): string[];
  /** Frames of a simulated in-band error. */
  error(meta: RouteMeta): string[];
  /** A non-streamed success body. */
  body(meta: RouteMeta, end: WireEnd): unknown;
}

/** Identity of one response. */
export interface RouteMeta {
  id: string;
  model: string;
  /** Unix seconds. */
  created: number;
}

/** Settings taken from the simulator options. */
export interface RouteWriterSettings {
  tokensPerChunk: number;
  reasoningTokens: number;
}

/** Per-request sink that writes a response in a {@link WireFormat}. */
export class RouteWriter implements SequenceSink {
  private sent = 0;
  private closed = false;
  private readonly out: BurstWriter;
  seq: Sequence | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly format: WireFormat,
    private readonly meta: RouteMeta,
    private readonly req: RouteRequest,
    private readonly settings: RouteWriterSettings,
    private readonly fault: Fault,
    readonly timeline: RequestTimeline,
    private readonly cancel: (seq: Sequence) => void,
    private readonly done: (timeline: RequestTimeline) => void,
  ) {
    this.out = new BurstWriter(res, timeline);
  }

  private get total(): number {
    return this.settings.reasoningTokens + this.req.maxTokens;
  }

  /** Sends the stream's headers and start frames. */
  start(): void {
    if (!this.req.stream) return;
    startStream(this.res, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    this.write(this.format.start(this.meta));
  }

  /** Gathers what the next token calls write, until {@link endBurst}. */
  beginBurst(): void {
    this.out.beginBurst();
  }

  /** Writes what was gathered since {@link beginBurst} (nothing when the response already ended). */
  endBurst(): void {
    this.out.endBurst();
  }

  /** Client went away: stop generating and record it. */
  abandon(): void {
    if (this.closed) return;
    if (this.seq !== null) this.cancel(this.seq);
    this.finish(499);
  }

  onToken(index: number, nowNs: number, batchSize: number): void {
    if (this.closed) return;
    if (index === 0) {
      this.timeline.firstTokenStepNs = nowNs;
      this.timeline.batchSizeAtFirstToken = batchSize;
      this.timeline.cachedTokens = this.seq?.cachedTokens ?? 0;
    }
    if (!this.req.stream) return;
    if (this.faultFires(index)) return;
    const to = index + 1;
    const boundary = to === this.settings.reasoningTokens;
    if (to - this.sent >= this.settings.tokensPerChunk || to >= this.total || boundary) this.flush(to);
  }

  onDone(_nowNs: number): void {
    if (this.closed) return;
    // The ground truth records when the response actually ended (its last write follows at once),
    // not the scheduler's planned time `nowNs`, which a late or early timer makes differ from it.
    this.timeline.endNs = monotonicNowNs();
    if (this.req.stream) {
      this.write(this.format.end(this.meta, this.endOf(this.sent)));
      this.end();
    } else {
      this.sendBody();
    }
    this.finish(200);
  }

  private endOf(tokens: number): WireEnd {
    const r = this.settings.reasoningTokens;
    const reasoning = Math.min(tokens, r);
    return {
      text: outputText(0, Math.max(0, tokens - r)),
      reasoning: outputText(0, reasoning),
      usage: usageBody(this.timeline.promptTokens, this.seq?.cachedTokens ?? 0, tokens, reasoning),
    };
  }

  private faultFires(index: number): boolean {
    const f = this.fault;
    if (f.kind !== 'sse-error' && f.kind !== 'truncate' && f.kind !== 'reset') return false;
    if (index !== f.afterTokens) return false;
    if (index > this.sent) this.flush(index);
    if (this.seq !== null) this.cancel(this.seq);
    if (f.kind === 'sse-error') this.write(this.format.error(this.meta));
    if (f.kind === 'reset') this.reset();
    else this.end();
    this.finish(200);
    return true;
  }

  /** TCP reset, after the bytes this turn wrote have left ({@link BurstWriter.reset}). */
  private reset(): void {
    this.out.reset();
  }

  /** Ends the response with the gathered frames. */
  private end(): void {
    this.out.endWith('');
  }

  private flush(to: number): void {
    const r = this.settings.reasoningTokens;
    const from = this.sent;
    const reasoning = from < r;
    const text = reasoning ? outputText(from, to) : outputText(from - r, to - r);
    const piece: WireDelta = { text, reasoning, last: to >= this.total, sentTokens: to };
    if (piece.last) piece.end = this.endOf(to);
    this.out.countChunk();
    this.write(this.format.delta(this.meta, piece));
    this.sent = to;
  }

  private sendBody(): void {
    const body = JSON.stringify(this.format.body(this.meta, this.endOf(this.total)));
    const now = monotonicNowNs();
    this.timeline.firstTokenWriteNs = now;
    this.timeline.chunkWriteNs.push(now);
    this.sent = this.total;
    this.res.writeHead(200, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    this.res.end(body);
  }

  /** Writes `frames` now (as one write), or gathers them during a burst. */
  private write(frames: string[]): void {
    this.out.put(frames.join(''));
  }

  private finish(status: number): void {
    this.closed = true;
    this.timeline.status = status;
    this.timeline.outputTokens = this.sent;
    this.timeline.endNs ??= monotonicNowNs();
    this.done(this.timeline);
  }
}

/** An SSE frame with an optional event type. */
export function sseFrame(data: unknown, event?: string): string {
  const head = event === undefined ? '' : `event: ${event}\n`;
  return `${head}data: ${JSON.stringify(data)}\n\n`;
}
