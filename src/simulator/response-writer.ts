/**
 * Turns a sequence's token callbacks into an HTTP response: SSE chunks (k tokens per chunk,
 * reasoning before content, optional role-only first chunk, usage chunk, `[DONE]`) or one JSON
 * body, and applies the after-N-tokens faults (in-band error, truncation, TCP reset). Tokens the
 * scheduler delivers as one burst (same due time) are gathered and written with one `write`.
 */
import type { ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import { BurstWriter } from './burst-writer.js';
import { ChunkFramer } from './chunk-text.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import type { ParsedRequest } from './request-parse.js';
import {
  type ChunkContent,
  errorBody,
  fullBody,
  outputText,
  type ResponseMeta,
  usageBody,
} from './responses.js';
import type { Sequence, SequenceSink } from './sequence.js';
import { startStream } from './stream-start.js';

/** Settings the writer needs beyond the request. */
export interface WriterSettings {
  tokensPerChunk: number;
  roleOnlyFirstChunk: boolean;
  reasoningTokens: number;
}

/** Called once when the response is over (sent, faulted or abandoned). */
export type WriterDone = (timeline: RequestTimeline) => void;

/** Per-request sink that writes the response. */
export class ResponseWriter implements SequenceSink {
  private pendingFrom = 0;
  private sent = 0;
  private closed = false;
  private readonly perChunk: number;
  private readonly roleChunk: boolean;
  private roleSent = false;
  private readonly framer: ChunkFramer;
  private readonly out: BurstWriter;
  seq: Sequence | null = null;

  constructor(
    private readonly res: ServerResponse,
    private readonly meta: ResponseMeta,
    private readonly req: ParsedRequest,
    private readonly settings: WriterSettings,
    private readonly fault: Fault,
    readonly timeline: RequestTimeline,
    private readonly cancel: (seq: Sequence) => void,
    private readonly done: WriterDone,
  ) {
    this.perChunk = fault.kind === 'multi-token' ? fault.tokensPerChunk : settings.tokensPerChunk;
    this.roleChunk = req.kind === 'chat' && (settings.roleOnlyFirstChunk || fault.kind === 'role-chunk');
    this.framer = new ChunkFramer(meta);
    this.out = new BurstWriter(res, timeline);
  }

  private get total(): number {
    return this.settings.reasoningTokens + this.req.maxTokens;
  }

  /** Sends the stream's headers (and the role-only chunk when configured). */
  start(): void {
    if (!this.req.stream) return;
    startStream(this.res, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    if (this.roleChunk) {
      this.out.put(this.framer.chunk({ role: true, content: null }, null));
      this.roleSent = true;
    }
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
    const t = this.timeline;
    if (index === 0) {
      t.firstTokenStepNs = nowNs;
      t.batchSizeAtFirstToken = batchSize;
      t.cachedTokens = this.seq?.cachedTokens ?? 0;
    }
    if (this.req.stream && this.faultFires(index)) return;
    const last = index + 1 >= this.total;
    const boundary = index + 1 === this.settings.reasoningTokens;
    if (this.req.stream && (index + 1 - this.pendingFrom >= this.perChunk || last || boundary)) {
      this.flush(index + 1, last);
    }
  }

  onDone(_nowNs: number): void {
    if (this.closed) return;
    // The ground truth records when the response actually ended (its last write follows at once),
    // not the scheduler's planned time `nowNs`, which a late or early timer makes differ from it.
    this.timeline.endNs = monotonicNowNs();
    if (this.req.stream) this.endStream();
    else this.endBody();
  }

  private faultFires(index: number): boolean {
    const f = this.fault;
    if ((f.kind !== 'sse-error' && f.kind !== 'truncate' && f.kind !== 'reset') || index !== f.afterTokens)
      return false;
    if (index > this.pendingFrom) this.flush(index, false);
    if (this.seq !== null) this.cancel(this.seq);
    if (f.kind === 'sse-error') {
      this.writeEvent(errorBody('simulated in-band error', 'internal_server_error', 500));
      this.out.endWith('data: [DONE]\n\n');
    } else if (f.kind === 'truncate') {
      this.out.endWith('');
    } else {
      this.reset();
    }
    this.finish(200);
    return true;
  }

  /** TCP reset, after the bytes this turn wrote have left ({@link BurstWriter.reset}). */
  private reset(): void {
    this.out.reset();
  }

  private usage(completion: number): ReturnType<typeof usageBody> {
    const reasoning = Math.min(completion, this.settings.reasoningTokens);
    return usageBody(this.timeline.promptTokens, this.seq?.cachedTokens ?? 0, completion, reasoning);
  }

  private flush(to: number, last: boolean): void {
    const from = this.pendingFrom;
    const r = this.settings.reasoningTokens;
    const c: ChunkContent = {};
    if (this.req.kind === 'chat' && from === 0 && !this.roleSent) c.role = true;
    if (from < r) c.reasoning = outputText(from, to);
    else c.content = outputText(from - r, to - r);
    if (last) c.finishReason = 'length';
    const usage = this.req.continuousUsage ? this.usage(to) : null;
    this.out.countChunk();
    this.out.put(this.framer.chunk(c, usage));
    this.pendingFrom = to;
    this.sent = to;
  }

  private writeEvent(obj: unknown): void {
    this.out.put(`data: ${JSON.stringify(obj)}\n\n`);
  }

  private endStream(): void {
    const usage = this.req.includeUsage ? this.framer.usage(this.usage(this.sent)) : '';
    this.out.endWith(`${usage}data: [DONE]\n\n`);
    this.finish(200);
  }

  private endBody(): void {
    const f = this.fault;
    const r = this.settings.reasoningTokens;
    if (f.kind === 'reset') {
      this.res.socket?.resetAndDestroy();
      this.finish(0);
      return;
    }
    if (f.kind === 'sse-error') {
      this.sendJson(500, errorBody('simulated server error', 'internal_server_error', 500));
      this.finish(500);
      return;
    }
    const body = JSON.stringify(
      fullBody(this.meta, outputText(0, this.req.maxTokens), outputText(0, r), this.usage(this.total)),
    );
    const now = monotonicNowNs();
    this.timeline.firstTokenWriteNs = now;
    this.timeline.chunkWriteNs.push(now);
    if (f.kind === 'truncate') {
      this.res.writeHead(200, { 'content-type': 'application/json' });
      this.res.end(body.slice(0, Math.floor(body.length / 2)));
    } else {
      this.res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
      });
      this.res.end(body);
    }
    this.finish(200);
  }

  private sendJson(status: number, obj: unknown): void {
    const body = JSON.stringify(obj);
    this.res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(body),
    });
    this.res.end(body);
  }

  private finish(status: number): void {
    this.closed = true;
    this.timeline.status = status;
    this.timeline.outputTokens = this.req.stream ? this.sent : (this.seq?.generated ?? 0);
    this.timeline.endNs ??= monotonicNowNs();
    this.done(this.timeline);
  }
}
