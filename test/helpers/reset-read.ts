/**
 * What a client can know of a TCP reset that follows some data. A reset read on time is
 * `connection_reset` (`read ECONNRESET`). A reset that arrives while the data before it is still
 * unread is not seen at all: libuv, reading a socket that reports a hang-up after a short read,
 * takes it for the end of the stream without reading again (Node emits `end`, not `ECONNRESET`; the
 * kernel would have returned the reset on the next read), so undici reports `other side closed` and
 * the record is `stream_incomplete`, with the data read in that same turn or dropped with the body.
 * docs/artifacts.md says so beside the error kinds.
 */
import assert from 'node:assert/strict';
import type { RawRecord } from '../../src/record/types.js';

/**
 * Asserts that `raw` failed as a reset does: `connection_reset`, or, only when the client read the
 * stream after the reset had arrived, `stream_incomplete` ("other side closed") whose last chunk (if
 * any) was stamped in the failure's own turn: under half of `resetGapMs`, the time the server waited
 * between its last write and the reset, before the failure stamp.
 */
export function assertResetRead(raw: RawRecord, resetGapMs: number, name: string): void {
  const error = raw.error;
  assert.ok(error !== null, `${name}: a reset is a failure`);
  assert.equal(error.code, 502, `${name}: code`);
  if (error.kind === 'connection_reset') return;
  assert.equal(error.kind, 'stream_incomplete', `${name}: kind (${error.message})`);
  assert.match(error.message, /other side closed/, name);
  const last = raw.chunks[raw.chunks.length - 1];
  if (last === undefined) return;
  const gapMs = (error.failedAtNs - last.atNs) / 1e6;
  assert.ok(
    gapMs < resetGapMs / 2,
    `${name}: read as an end of stream ${gapMs.toFixed(1)} ms after its last chunk, so the chunk was read on time and the reset should have been seen`,
  );
}
