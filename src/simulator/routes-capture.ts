/**
 * Test aid: an in-memory log of the POST bodies the simulator received, in arrival order, so a
 * test can assert exactly what a client put on the wire. Off unless `startSimulator` is asked for
 * it (bodies can be large; a long run would keep them all).
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';

/** One received request. */
export interface CapturedRequest {
  /** URL path without the query string. */
  path: string;
  /** The body as UTF-8 text (complete once the request ended). */
  body: string;
  /** The request's headers (names lower-cased). */
  headers: IncomingHttpHeaders;
}

/** Keeps every captured request. */
export class RequestCapture {
  private readonly list: CapturedRequest[] = [];

  /**
   * Starts capturing `req`'s body. Must be called in the same tick the request arrives, before
   * the handler reads the body (both listeners then see every chunk).
   */
  capture(req: IncomingMessage, path: string): void {
    const entry: CapturedRequest = { path, body: '', headers: req.headers };
    this.list.push(entry);
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      entry.body = Buffer.concat(parts).toString('utf8');
    });
  }

  /** Captured requests so far (a copy of the list). */
  requests(): CapturedRequest[] {
    return [...this.list];
  }
}
