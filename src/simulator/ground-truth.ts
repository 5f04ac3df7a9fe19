/**
 * Ground-truth log: one JSONL line per finished request with the server's own timings, so a
 * benchmark's client-side measurements can be checked against what the server actually did.
 * Times are wall-clock epoch nanoseconds written as decimal strings (they exceed 2^53).
 */
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { TokenloadError } from '../errors.js';
import { TimeBase } from '../timing/clock.js';

/** Server-side timeline of one request (monotonic ns of this process until written). */
export interface RequestTimeline {
  id: string;
  /** The client's `X-Request-ID` header, or null when it sent none (joins client records). */
  xRequestId: string | null;
  endpoint: string;
  status: number;
  fault: string;
  arrivalNs: number;
  /** When the scheduler got its sequence, or null (it never got one). */
  queuedNs: number | null;
  /** When its sequence was admitted (left the queue), or null. */
  admittedNs: number | null;
  /** Scheduler time of the first output token (end of its step in engine mode), or null. */
  firstTokenStepNs: number | null;
  /** Actual write of the first token-carrying chunk, or null. */
  firstTokenWriteNs: number | null;
  chunkWriteNs: number[];
  endNs: number | null;
  promptTokens: number;
  cachedTokens: number;
  outputTokens: number;
  /** Sequences in the step that produced the first token (1 in fixed mode). */
  batchSizeAtFirstToken: number | null;
}

/** Appends timelines to a JSONL file. */
export class GroundTruthLog {
  private readonly out: WriteStream;
  private readonly base = new TimeBase();

  /**
   * @param path file to create (truncated if it exists); opened at once, so a bad path fails the start.
   * @throws {TokenloadError} `E_SIMULATOR` naming the option when the file cannot be created.
   */
  constructor(path: string) {
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      if (typeof e.code !== 'string') throw err;
      throw new TokenloadError(
        'E_SIMULATOR',
        `ground-truth-log ${path}: cannot create the file (${e.code})`,
        {
          cause: err,
        },
      );
    }
    this.out = createWriteStream('', { fd });
  }

  private epoch(ns: number | null): string | null {
    return ns === null ? null : this.base.toEpochNs(ns).toString();
  }

  /** Writes one line. */
  write(t: RequestTimeline): void {
    const line = {
      id: t.id,
      x_request_id: t.xRequestId,
      endpoint: t.endpoint,
      status: t.status,
      fault: t.fault,
      arrival_ns: this.epoch(t.arrivalNs),
      queued_ns: this.epoch(t.queuedNs),
      admitted_ns: this.epoch(t.admittedNs),
      first_token_step_ns: this.epoch(t.firstTokenStepNs),
      first_token_write_ns: this.epoch(t.firstTokenWriteNs),
      chunk_write_ns: t.chunkWriteNs.map((n) => this.epoch(n)),
      end_ns: this.epoch(t.endNs),
      prompt_tokens: t.promptTokens,
      cached_tokens: t.cachedTokens,
      output_tokens: t.outputTokens,
      batch_size_at_first_token: t.batchSizeAtFirstToken,
    };
    this.out.write(`${JSON.stringify(line)}\n`);
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    return new Promise((resolve) => this.out.end(resolve));
  }
}
