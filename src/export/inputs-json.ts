/**
 * `inputs.json`: the request bodies that were sent, as `{"data":[{"session_id","payloads":[…]}]}`
 * (AIPerf inputs file). Written incrementally: prompts can be 100k tokens, so no body is kept after
 * it is written.
 */
import { LineSink } from './line-sink.js';

/** Default file name of the inputs export. */
export const INPUTS_FILE_NAME = 'inputs.json';

/**
 * Streams bodies into `inputs.json`. Consecutive bodies of the same session share one `data` entry;
 * when sessions interleave (concurrent sessions), a session can appear in several entries, each with
 * its turns in order — readers should merge entries by `session_id`. The file is valid JSON only
 * after {@link InputsWriter.close}.
 */
export class InputsWriter {
  private readonly sink: LineSink;
  private currentSession: string | null = null;
  private started = false;
  private closed = false;

  /** Opens (truncating) `path`. */
  constructor(path: string) {
    this.sink = new LineSink(path);
  }

  /**
   * Appends one request body of `sessionId`. A string or bytes body is taken as already-serialized
   * JSON (bytes: the exact UTF-8 bytes sent, written without a copy; they must not change afterwards),
   * avoiding a second serialization of large prompts.
   * @throws the file's write error.
   */
  add(sessionId: string, body: string | Uint8Array | Record<string, unknown>): Promise<void> {
    const json = typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body);
    let prefix = this.started ? '' : '{"data":[';
    this.started = true;
    if (sessionId === this.currentSession) {
      prefix += ',';
    } else {
      if (this.currentSession !== null) prefix += ']},';
      prefix += `{"session_id":${JSON.stringify(sessionId)},"payloads":[`;
      this.currentSession = sessionId;
    }
    return typeof json === 'string' ? this.sink.write(prefix + json) : this.sink.write(prefix, json);
  }

  /** Writes the closing brackets, flushes and closes; safe to call twice. @throws the file's write error. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const open = this.started ? '' : '{"data":[';
    const tail = this.currentSession === null ? ']}\n' : ']}]}\n';
    await this.sink.write(open + tail);
    await this.sink.close();
  }
}
