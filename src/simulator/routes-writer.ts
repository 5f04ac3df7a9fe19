/**
 * The simulator's one response writer: turns a sequence's token callbacks into the response of any
 * generation route, with the wire shapes delegated to the route's {@link WireFormat}. It cuts the
 * output into pieces (`tokensPerChunk` tokens, or `k` under the `multi-token:k` fault; a piece ends
 * at the reasoning boundary and at the last token), ends the stream, and applies the after-N-tokens
 * faults: on a stream an in-band error, a clean truncation or a TCP reset after N tokens; on a
 * non-streamed response a 500, half a body or a reset. Tokens the scheduler delivers as one burst
 * (same due time) are gathered and written with one `write`.
 */
import type { ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import { BurstWriter } from './burst-writer.js';
import type { Fault } from './faults.js';
import type { RequestTimeline } from './ground-truth.js';
import { sendError } from './handler.js';
import type { SimulatorOptions } from './options.js';
import { outputText } from './responses.js';
import type { Sequence, SequenceSink } from './sequence.js';
import { serverTimingFields } from './server-timing.js';
import { startStream } from './stream-start.js';
import { type RouteRequest, type WireFormat, WireOutput } from './wire-format.js';

/** Settings taken from the simulator options. */
export interface RouteWriterSettings {
  tokensPerChunk: number;
  /** Reasoning tokens every response starts with (on top of the requested output). */
  reasoningTokens: number;
  /** The shape of the server timing the final usage chunk or body carries (`none`: no timing). */
  serverTiming: SimulatorOptions['serverTiming'];
}

/** Called once when the response is over (sent, faulted or abandoned), with its finished timeline. */
export type WriterDone = (timeline: RequestTimeline) => void;

/** Per-request sink that writes a response in a {@link WireFormat}. */
export class RouteWriter implements SequenceSink {
  /** Output tokens written to the stream so far. */
  private sent = 0;
  private closed = false;
  private readonly perChunk: number;
  private readonly out: BurstWriter;
  /** The scheduler's time of the last token generated so far (monotonic ns), null before the first. */
  private lastTokenNs: number | null = null;
  /** The sequence generating the tokens (set right after construction). */
  seq: Sequence | null = null;

  /**
   * @param fault the fault this response acts on (the route may act on fewer than were drawn).
   * @param cancel stops the sequence (fault fired or client gone).
   */
  constructor(
    private readonly res: ServerResponse,
    private readonly format: WireFormat,
    private readonly req: RouteRequest,
    private readonly settings: RouteWriterSettings,
    private readonly fault: Fault,
    readonly timeline: RequestTimeline,
    private readonly cancel: (seq: Sequence) => void,
    private readonly done: WriterDone,
  ) {
    this.perChunk = fault.kind === 'multi-token' ? fault.tokensPerChunk : settings.tokensPerChunk;
    this.out = new BurstWriter(res, timeline);
  }

  private get total(): number {
    return this.settings.reasoningTokens + this.req.maxTokens;
  }

  /** Sends the stream's headers and start frames (nothing for a non-streamed response). */
  start(): void {
    if (!this.req.stream) return;
    startStream(this.res, this.format.streamHeaders);
    this.out.put(this.format.start());
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

  /** Records the first token's step, and on a stream fires a due fault or writes a finished piece. */
  onToken(index: number, nowNs: number, batchSize: number): void {
    if (this.closed) return;
    if (index === 0) {
      this.timeline.queuedNs = this.seq?.queuedNs ?? null;
      this.timeline.admittedNs = this.seq?.admittedNs ?? null;
      // A request that arrived after its step's modelled start (the step's timer ran late) is admitted
      // at its arrival; its first token is not before that (a server's TTFT is never negative).
      this.timeline.firstTokenStepNs = Math.max(nowNs, this.timeline.admittedNs ?? nowNs);
      this.timeline.batchSizeAtFirstToken = batchSize;
      this.timeline.cachedTokens = this.seq?.cachedTokens ?? 0;
    }
    this.lastTokenNs = Math.max(nowNs, this.timeline.firstTokenStepNs ?? nowNs);
    if (!this.req.stream) return;
    if (this.faultFires(index)) return;
    const to = index + 1;
    const boundary = to === this.settings.reasoningTokens;
    if (to - this.sent >= this.perChunk || to >= this.total || boundary) this.flush(to);
  }

  /** Ends the stream (end frames, `done`) or sends the non-streamed body. */
  onDone(_nowNs: number): void {
    if (this.closed) return;
    // The ground truth records when the response actually ended (its last write follows at once),
    // not the scheduler's planned time `nowNs`, which a late or early timer makes differ from it.
    this.timeline.endNs = monotonicNowNs();
    if (this.req.stream) {
      this.out.endWith(this.format.end(this.outputOf(this.sent, true)) + this.format.done);
      this.finish(200);
    } else {
      this.sendBody();
    }
  }

  /** The output [0, `tokens`); the `final` one (usage chunk, body) carries the server timing. */
  private outputOf(tokens: number, final = false): WireOutput {
    const cached = this.seq?.cachedTokens ?? 0;
    const t = this.timeline;
    const timing = final
      ? serverTimingFields(this.settings.serverTiming, {
          queuedNs: t.queuedNs,
          admittedNs: t.admittedNs,
          firstTokenNs: t.firstTokenStepNs,
          lastTokenNs: this.lastTokenNs,
          promptTokens: t.promptTokens,
          cachedTokens: cached,
          outputTokens: this.seq?.generated ?? tokens,
        })
      : null;
    return new WireOutput(tokens, this.settings.reasoningTokens, t.promptTokens, cached, timing);
  }

  /** Fires an after-N-tokens fault on a stream when token `index` is its N-th; true when it fired. */
  private faultFires(index: number): boolean {
    const f = this.fault;
    if (f.kind !== 'sse-error' && f.kind !== 'truncate' && f.kind !== 'reset') return false;
    if (index !== f.afterTokens) return false;
    if (index > this.sent) this.flush(index);
    if (this.seq !== null) this.cancel(this.seq);
    if (f.kind === 'reset') {
      this.out.reset();
    } else if (f.kind === 'truncate') {
      this.out.endWith('');
    } else {
      this.out.put(this.format.error());
      this.out.endWith(this.format.done);
    }
    this.finish(200);
    return true;
  }

  /** Writes output tokens [sent, to) as one piece. */
  private flush(to: number): void {
    const r = this.settings.reasoningTokens;
    const from = this.sent;
    const reasoning = from < r;
    const text = reasoning ? outputText(from, to) : outputText(from - r, to - r);
    this.out.countChunk();
    this.out.put(this.format.delta({ text, reasoning, last: to >= this.total, upTo: this.outputOf(to) }));
    this.sent = to;
  }

  /** The non-streamed response, or what its after-N-tokens fault makes of it. */
  private sendBody(): void {
    const f = this.fault;
    if (f.kind === 'reset') {
      this.res.socket?.resetAndDestroy();
      this.finish(0);
      return;
    }
    if (f.kind === 'sse-error') {
      sendError(this.res, 500, 'simulated server error');
      this.finish(500);
      return;
    }
    const body = JSON.stringify(this.format.body(this.outputOf(this.total, true)));
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

  /**
   * Closes the response's timeline: a stream reports the tokens it wrote, a non-streamed response
   * the tokens generated (all of them once it is sent).
   */
  private finish(status: number): void {
    this.closed = true;
    this.timeline.status = status;
    this.timeline.outputTokens = this.req.stream ? this.sent : (this.seq?.generated ?? 0);
    this.timeline.endNs ??= monotonicNowNs();
    this.done(this.timeline);
  }
}
