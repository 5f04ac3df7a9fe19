/**
 * The socket side of the simulator's response writer: text written while a burst is open
 * (tokens the scheduler delivers at the same due time) is gathered and leaves in one `write`; every
 * token chunk is stamped with the time it was handed to the socket (ground-truth write times).
 */
import type { ServerResponse } from 'node:http';
import { monotonicNowNs } from '../timing/clock.js';
import type { RequestTimeline } from './ground-truth.js';

/** Gathers writes during a burst and stamps token chunks when they are written. */
export class BurstWriter {
  /** Text gathered during a burst (null outside one). */
  private gathered: string | null = null;
  /** Token chunks written or gathered but not yet stamped. */
  private unstamped = 0;

  constructor(
    private readonly res: ServerResponse,
    private readonly timeline: RequestTimeline,
  ) {}

  /** Gathers what the next writes carry, until {@link endBurst}. */
  beginBurst(): void {
    this.gathered ??= '';
  }

  /** Writes what was gathered since {@link beginBurst} (nothing when the response already ended). */
  endBurst(): void {
    const text = this.gathered;
    this.gathered = null;
    if (text !== null && text !== '' && !this.res.writableEnded) this.res.write(text);
    this.stamp();
  }

  /** Counts one token chunk in the text written next. */
  countChunk(): void {
    this.unstamped++;
  }

  /** Writes `text` now, or gathers it during a burst. */
  put(text: string): void {
    if (this.gathered !== null) {
      this.gathered += text;
      return;
    }
    if (text !== '') this.res.write(text);
    this.stamp();
  }

  /** Ends the response with the gathered text plus `text`. */
  endWith(text: string): void {
    const all = (this.gathered ?? '') + text;
    if (this.gathered !== null) this.gathered = '';
    this.res.end(all);
    this.stamp();
  }

  /**
   * TCP reset. What this turn of the event loop wrote (gathered chunks, headers) is still buffered
   * in the socket and a reset would drop it, so then the reset follows on the next turn, after the
   * bytes have left.
   */
  reset(): void {
    this.endBurst();
    const socket = this.res.socket;
    if (socket === null) return;
    if (socket.writableLength === 0) socket.resetAndDestroy();
    else setImmediate(() => socket.resetAndDestroy());
  }

  private stamp(): void {
    if (this.unstamped === 0) return;
    const now = monotonicNowNs();
    this.timeline.firstTokenWriteNs ??= now;
    for (; this.unstamped > 0; this.unstamped--) this.timeline.chunkWriteNs.push(now);
  }
}
