/**
 * Start of a streamed response: status line and headers, corked until the end of the current turn
 * of the event loop, so they leave in one socket write with whatever else this turn writes (the
 * whole response when its tokens are due at once) and on their own, a moment later, otherwise.
 */
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';

/** Writes the 200 status line and `headers` of a stream (see the module comment). */
export function startStream(res: ServerResponse, headers: OutgoingHttpHeaders): void {
  const socket = res.socket;
  if (socket !== null && !socket.writableCorked) {
    socket.cork();
    process.nextTick(() => socket.uncork());
  }
  res.writeHead(200, headers);
  res.flushHeaders();
}
