/**
 * An append-only text file written through `fs.createWriteStream` with backpressure. Writes are
 * gathered in memory and handed to the stream in batches (at the end of the event-loop turn in
 * which 64 KiB were gathered, or 100 ms after the first pending write, and at close), so a run at
 * thousands of requests/s costs a few file writes per second instead of one per record. Each batch
 * holds whole pieces only, so a file cut short by an interruption still holds only whole lines; at
 * most the last 100 ms can be missing after a hard crash (Ctrl-C and SIGTERM close the file
 * normally). A piece given as bytes (a request body already encoded for the socket) is written as it
 * is: not decoded, joined or encoded again.
 */
import { once } from 'node:events';
import { createWriteStream, openSync, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import { OutputError } from '../errors.js';
import { fileSystemReason } from '../util/make-dir.js';

/** Pending bytes that trigger an immediate flush. */
const FLUSH_BYTES = 64 * 1024;
/** Longest time a written piece waits in memory, ms. */
const FLUSH_MS = 100;

/**
 * An artifact file that cannot be written, as the error the user reads: it names `--artifact-dir`,
 * the file, why in words when the code says it (read-only, full, …) and the code.
 */
function artifactError(path: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return err as Error;
  const reason = fileSystemReason(err);
  const why = reason === null ? '' : `: ${reason}`;
  return new OutputError(`--artifact-dir: cannot write ${path} (${code}${why})`, '--artifact-dir', err);
}

/** A file opened for sequential writes. */
export class LineSink {
  private readonly stream: WriteStream;
  private failure: Error | null = null;
  private ended = false;
  private pending: Array<string | Uint8Array> = [];
  /** Some pending piece is bytes (then the batch is written piece by piece, not joined). */
  private pendingHasBytes = false;
  private pendingBytes = 0;
  private timer: NodeJS.Timeout | null = null;
  /** The flush {@link LineSink.flushSoon} has scheduled, until it runs. */
  private soon: Promise<void> | null = null;
  /** One shared wait for 'drain', however many writers are waiting. */
  private drained: Promise<void> | null = null;

  /**
   * Opens (truncating) `path` at once, so a file that cannot be created fails before anything is sent.
   * Later write errors (a full disk) surface on the next `write` and on `close`.
   * @throws {OutputError} naming `--artifact-dir` and the file when it cannot be opened.
   */
  constructor(readonly path: string) {
    let fd: number;
    try {
      fd = openSync(path, 'w');
    } catch (err) {
      throw artifactError(path, err);
    }
    this.stream = createWriteStream('', { fd, encoding: 'utf8' });
    this.stream.on('error', (err) => {
      this.failure = artifactError(path, err);
    });
  }

  /**
   * Appends `pieces` (text, or UTF-8 bytes; they land in the same batch, in order); resolves at once
   * unless the stream is backed up. A byte piece must not be changed afterwards (it is written later,
   * without a copy).
   * @throws the stream's error (e.g. ENOENT, ENOSPC), or an Error after `close()`.
   */
  async write(...pieces: Array<string | Uint8Array>): Promise<void> {
    if (this.failure !== null) throw this.failure;
    if (this.ended) throw new Error(`${this.path}: write after close`);
    for (const piece of pieces) {
      this.pending.push(piece);
      if (typeof piece === 'string') {
        this.pendingBytes += piece.length;
      } else {
        this.pendingBytes += piece.byteLength;
        this.pendingHasBytes = true;
      }
    }
    if (this.pendingBytes >= FLUSH_BYTES) {
      await this.flushSoon();
    } else if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush().catch(() => undefined), FLUSH_MS);
    }
    if (this.drained !== null) await this.drained;
  }

  /**
   * Flushes once the current event-loop turn is over (`setImmediate`), once for every write of the
   * turn: a burst of requests sent in one turn, each writing its body to inputs.json, then costs one
   * file write after the burst, not a file write (and a thread-pool wake-up competing with the
   * sends for the CPU) between two of its sends.
   */
  private flushSoon(): Promise<void> {
    this.soon ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.soon = null;
        this.flush().then(resolve, reject);
      });
    });
    return this.soon;
  }

  /** Hands pending pieces to the stream as one write; waits for 'drain' when the stream is full. */
  private async flush(): Promise<void> {
    if (this.timer !== null) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.length === 0) return;
    const batch = this.pending;
    const hasBytes = this.pendingHasBytes;
    this.pending = [];
    this.pendingBytes = 0;
    this.pendingHasBytes = false;
    if (!(hasBytes ? this.writePieces(batch) : this.stream.write(batch.join('')))) await this.waitDrain();
    if (this.failure !== null) throw this.failure;
  }

  /** Hands a batch with byte pieces to the stream piece by piece, as one vectored write; false when full. */
  private writePieces(batch: Array<string | Uint8Array>): boolean {
    this.stream.cork();
    let room = true;
    for (const piece of batch) room = this.stream.write(piece);
    this.stream.uncork();
    return room;
  }

  private waitDrain(): Promise<void> {
    if (this.drained === null) {
      this.drained = once(this.stream, 'drain').then(() => {
        this.drained = null;
      });
    }
    return this.drained;
  }

  /** Flushes and closes the file; safe to call twice. @throws the stream's error, if any. */
  async close(): Promise<void> {
    if (this.ended) return;
    await this.flush().catch(() => undefined);
    this.ended = true;
    this.stream.end();
    await finished(this.stream).catch((err: Error) => {
      this.failure ??= artifactError(this.path, err);
    });
    if (this.failure !== null) throw this.failure;
  }
}
