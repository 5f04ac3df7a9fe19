/**
 * `inputs.json`: the request bodies that were sent, as `{"data":[{"session_id","payloads":[…]}]}`
 * (AIPerf's inputs file): one entry per session, in the order the sessions first sent, each with
 * its turns' bodies in turn order.
 *
 * Why a spool: bodies are only known when they are sent (a later turn can carry the server's
 * replies), sessions interleave, and a streamed replay never learns that a session is over (a
 * Bailian row can join any earlier session), so an entry cannot be written when its session ends.
 * Keeping bodies in memory until then would hold a whole trace's prompts (100k-token bodies, a
 * million rows). So each body goes, as sent, to a spool file beside `inputs.json`, and only its
 * place in the spool is kept; at close `inputs.json` is written from the spool in one pass,
 * session by session, and the spool is removed. Memory: three numbers per body (about 24 bytes)
 * and one map entry per session, never a body. Disk: the bodies twice, until the spool is removed.
 * Every mode (a dataset loaded whole, a streamed trace, a cycled synthetic dataset) writes through
 * this one path, so the same sends give the same file.
 */
import { type FileHandle, open, rm } from 'node:fs/promises';
import { LineSink } from './line-sink.js';

/** Default file name of the inputs export. */
export const INPUTS_FILE_NAME = 'inputs.json';

/** The spool beside `inputs.json` while a phase runs (removed when the writer closes). */
export const INPUTS_SPOOL_FILE_NAME = 'inputs.json.spool';

/** Bytes read from the spool at a time when `inputs.json` is assembled. */
const SPOOL_READ_BYTES = 1 << 20;

const encoder = new TextEncoder();

/**
 * Collects bodies while a phase runs and writes `inputs.json` at {@link InputsWriter.close}: one
 * entry per session (in the order sessions first sent), with each turn's body once, in turn order.
 * A turn sent again (a cycled dataset sends a conversation more than once) is listed once, as it
 * was first sent, so an entry reads as the session's turns, as in AIPerf's file. The file is
 * complete only after {@link InputsWriter.close}.
 */
export class InputsWriter {
  private readonly out: LineSink;
  private readonly spool: LineSink;
  private readonly spoolPath: string;
  private spoolBytes = 0;
  /** Session id → slot, in first-send order (a Map iterates in insertion order). */
  private readonly slots = new Map<string, number>();
  /** Per slot: its first and last body (indices into the body arrays), and its highest turn index. */
  private readonly heads: number[] = [];
  private readonly tails: number[] = [];
  private readonly lastTurns: number[] = [];
  /** Per body: where it is in the spool, and the next body of its session (-1: none). */
  private readonly offsets: number[] = [];
  private readonly lengths: number[] = [];
  private readonly nexts: number[] = [];
  private closed = false;

  /**
   * Opens (truncating) `path` and its spool (`<path>.spool`) at once, so a folder that cannot be
   * written fails before anything is sent.
   * @throws {OutputError} naming `--artifact-dir` and the file.
   */
  constructor(path: string) {
    this.out = new LineSink(path);
    this.spoolPath = `${path}.spool`;
    this.spool = new LineSink(this.spoolPath);
  }

  /**
   * Adds the body of turn `turnIndex` of session `sessionId`, as sent; a turn of that session
   * already added (or an earlier one) is skipped. A string or bytes body is taken as serialized
   * JSON (bytes: the exact UTF-8 bytes sent, written without a copy; they must not change
   * afterwards).
   * @throws the spool's write error.
   */
  add(
    sessionId: string,
    turnIndex: number,
    body: string | Uint8Array | Record<string, unknown>,
  ): Promise<void> | undefined {
    let slot = this.slots.get(sessionId);
    if (slot !== undefined && turnIndex <= (this.lastTurns[slot] as number)) return undefined;
    const bytes =
      body instanceof Uint8Array
        ? body
        : encoder.encode(typeof body === 'string' ? body : JSON.stringify(body));
    const piece = this.offsets.length;
    this.offsets.push(this.spoolBytes);
    this.lengths.push(bytes.byteLength);
    this.nexts.push(-1);
    this.spoolBytes += bytes.byteLength;
    if (slot === undefined) {
      slot = this.heads.length;
      this.slots.set(sessionId, slot);
      this.heads.push(piece);
      this.tails.push(piece);
      this.lastTurns.push(turnIndex);
    } else {
      this.nexts[this.tails[slot] as number] = piece;
      this.tails[slot] = piece;
      this.lastTurns[slot] = turnIndex;
    }
    return this.spool.write(bytes);
  }

  /**
   * Writes `inputs.json` from the spool, closes it and removes the spool; safe to call twice.
   * @throws the files' write or read error.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.spool.close();
      const reader = await open(this.spoolPath, 'r');
      try {
        await this.writeEntries(new SpoolReader(reader));
      } finally {
        await reader.close();
      }
      await this.out.close();
    } finally {
      await this.out.close().catch(() => undefined);
      await rm(this.spoolPath, { force: true });
    }
  }

  /** Writes `{"data":[…]}`: each session's entry with its bodies copied from the spool. */
  private async writeEntries(reader: SpoolReader): Promise<void> {
    await this.out.write('{"data":[');
    let first = true;
    for (const [sessionId, slot] of this.slots) {
      await this.out.write(`${first ? '' : ','}{"session_id":${JSON.stringify(sessionId)},"payloads":[`);
      first = false;
      for (let piece = this.heads[slot] as number; piece !== -1; piece = this.nexts[piece] as number) {
        if (piece !== this.heads[slot]) await this.out.write(',');
        await reader.copy(this.offsets[piece] as number, this.lengths[piece] as number, this.out);
      }
      await this.out.write(']}');
    }
    await this.out.write(']}\n');
  }
}

/**
 * Reads byte ranges of the spool through a window of {@link SPOOL_READ_BYTES}: bodies are read
 * mostly in the order they were written, so most ranges are served from the window in memory.
 * Each window is a new buffer, never reused, since the sink keeps the pieces it is given.
 */
class SpoolReader {
  private window: Buffer = Buffer.alloc(0);
  private windowStart = 0;

  constructor(private readonly file: FileHandle) {}

  /** Writes the `length` bytes at `offset` of the spool to `sink`. */
  async copy(offset: number, length: number, sink: LineSink): Promise<void> {
    let at = offset;
    const end = offset + length;
    while (at < end) {
      const inWindow = at >= this.windowStart && at < this.windowStart + this.window.length;
      if (!inWindow) await this.load(at);
      const from = at - this.windowStart;
      const to = Math.min(this.window.length, end - this.windowStart);
      await sink.write(this.window.subarray(from, to));
      at = this.windowStart + to;
    }
  }

  private async load(offset: number): Promise<void> {
    const buffer = Buffer.allocUnsafe(SPOOL_READ_BYTES);
    const { bytesRead } = await this.file.read(buffer, 0, buffer.length, offset);
    if (bytesRead === 0) throw new Error(`inputs spool: nothing to read at byte ${offset}`);
    this.window = buffer.subarray(0, bytesRead);
    this.windowStart = offset;
  }
}
