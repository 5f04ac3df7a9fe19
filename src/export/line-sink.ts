/**
 * An append-only text file written through `fs.createWriteStream` with backpressure: each `write`
 * hands the whole string to the stream in one call (so a file cut short by an interruption holds
 * only whole pieces) and waits for `'drain'` when the stream's buffer is full.
 */
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';

/** A file opened for sequential writes. */
export class LineSink {
  private readonly stream: WriteStream;
  private failure: Error | null = null;
  private ended = false;
  /** One shared wait for 'drain', however many writers are waiting (no listener per write). */
  private drained: Promise<void> | null = null;

  /** Opens (truncating) `path`. Open errors surface on the first `write` or `close`. */
  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'w', encoding: 'utf8' });
    this.stream.on('error', (err) => {
      this.failure = err;
    });
  }

  /**
   * Appends `text`; resolves once the stream can take more.
   * @throws the stream's error (e.g. ENOENT, ENOSPC), or an Error after `close()`.
   */
  async write(text: string): Promise<void> {
    if (this.failure !== null) throw this.failure;
    if (this.ended) throw new Error(`${this.path}: write after close`);
    if (!this.stream.write(text)) await this.waitDrain();
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
    this.ended = true;
    this.stream.end();
    await finished(this.stream);
    if (this.failure !== null) throw this.failure;
  }
}
