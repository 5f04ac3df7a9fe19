/**
 * A guard between a trace file and its line reader. `node:readline` builds each line as one string,
 * and a line longer than a string can be (about 512 MiB in V8) throws from inside the stream, out of
 * reach of the reader: the process dies with a bare `RangeError`. The guard counts the bytes of the
 * line being read and fails the read first, naming the file and the line, far below that limit and
 * far above any trace row (a row with its messages is at most a few MB). Cost: one native newline
 * search per line, as the line reader does anyway.
 */
import { pipeline, type Readable, Transform, type TransformCallback } from 'node:stream';
import { DatasetError } from './types.js';

/** Longest line a trace file may hold, bytes (64 MiB: 16 times a row with a million-token prompt). */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

const NEWLINE = 0x0a;

function tooLong(file: string, line: number, maxLineBytes: number): DatasetError {
  return new DatasetError(
    `${file}:${line}: a line longer than ${Math.round(maxLineBytes / 1024 / 1024)} MiB; no trace row is that long: is this the trace file (JSON Lines or CSV, one row per line)?`,
    file,
    line,
  );
}

/**
 * `source` read through a line-length guard: the stream a line reader takes. A line over
 * `maxLineBytes` fails it with a {@link DatasetError} naming `file` and the line (1-based); an error
 * of `source` fails it too.
 */
export function guardLines(source: Readable, file: string, maxLineBytes = MAX_LINE_BYTES): Readable {
  let line = 1;
  let pending = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
      let from = 0;
      for (let nl = chunk.indexOf(NEWLINE); nl !== -1; nl = chunk.indexOf(NEWLINE, from)) {
        if (pending + nl - from > maxLineBytes) {
          done(tooLong(file, line, maxLineBytes));
          return;
        }
        line++;
        pending = 0;
        from = nl + 1;
      }
      pending += chunk.length - from;
      if (pending > maxLineBytes) {
        done(tooLong(file, line, maxLineBytes));
        return;
      }
      done(null, chunk);
    },
  });
  return pipeline(source, guard, () => undefined);
}
