/**
 * `profile_export_raw.jsonl` (`--export-level raw`, AIPerf's raw export): one line per request with
 * what went over the wire besides the metrics: the request body sent (`payload`), the HTTP status,
 * the answer's content as it arrived (`responses`) and the error. The shape follows AIPerf's raw
 * record (its `RawRecordInfo`: `metadata`, `start_perf_ns`, `payload`, `request_headers`,
 * `response_headers`, `status`, `responses`, `error`), with one difference: tokenload does not keep
 * the SSE bytes, so each entry of `responses` is one parsed content chunk,
 * `{perf_ns, text, reasoning}` (monotonic ns, the chunk's text and reasoning text), not a raw SSE
 * message. Headers are not recorded (null).
 */
import type { LineRecord, RawRecord } from '../record/types.js';
import { type EpochConverter, errorOf, metadataText } from './jsonl-writer.js';
import { LineSink } from './line-sink.js';

/** File name of the raw export. */
export const RAW_RECORDS_FILE_NAME = 'profile_export_raw.jsonl';

/**
 * Streams raw lines as requests complete. Request bodies arrive first ({@link addBody}, as each is
 * sent) and wait, per conversation and turn in send order, for their request's record.
 */
export class RawRecordWriter {
  private readonly sink: LineSink;
  private readonly bodies = new Map<string, Uint8Array[]>();

  /** Opens (truncating) `path`; `time` converts monotonic ns to epoch ns for the metadata. */
  constructor(
    path: string,
    private readonly time: EpochConverter,
  ) {
    this.sink = new LineSink(path);
  }

  /** Keeps the body sent for turn `turnIndex` of `conversationId` until its record comes. */
  addBody(conversationId: string, turnIndex: number, body: Uint8Array): void {
    const key = `${conversationId}\u0000${turnIndex}`;
    const queue = this.bodies.get(key);
    if (queue === undefined) this.bodies.set(key, [body]);
    else queue.push(body);
  }

  /** Appends the raw line of `record` (`raw`: its record with the content chunks). @throws the file's write error. */
  write(record: LineRecord, raw: RawRecord): Promise<void> {
    const key = `${raw.conversationId}\u0000${raw.turnIndex}`;
    const queue = this.bodies.get(key);
    const body = queue?.shift();
    if (queue !== undefined && queue.length === 0) this.bodies.delete(key);
    const payload = body === undefined || body.length === 0 ? 'null' : Buffer.from(body).toString('utf8');
    const responses = raw.chunks.map((c) => ({ perf_ns: c.atNs, text: c.text, reasoning: c.reasoning }));
    const line =
      `{"metadata":${metadataText(record, this.time)},"start_perf_ns":${raw.startNs},"payload":${payload},` +
      `"request_headers":null,"response_headers":null,"status":${raw.httpStatus ?? 'null'},` +
      `"responses":${JSON.stringify(responses)},"error":${JSON.stringify(errorOf(record))}}\n`;
    return this.sink.write(line);
  }

  /** Flushes and closes the file. @throws the file's write error. */
  close(): Promise<void> {
    return this.sink.close();
  }
}
