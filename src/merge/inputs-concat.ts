/**
 * The merged `inputs.json`: the shards' `data` entries one after another, in shard order, each
 * shard's in its own order (`{"data":[<shard 0's entries>,<shard 1's entries>,…]}`). Streamed byte
 * for byte: a body is never parsed or held in memory. A run writes one entry per session
 * (export/inputs-json.ts) and a session is never split across shards, so each session appears once.
 */
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { RunLoadError } from '../report/types.js';

const HEAD = '{"data":[';
const TAILS = [']}\n', ']}'] as const;

/** Byte range of the entries inside one `inputs.json`; null when it has none. */
async function entriesRange(file: string): Promise<{ start: number; end: number } | null> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const head = Buffer.alloc(Math.min(size, HEAD.length));
    await handle.read(head, 0, head.length, 0);
    const tailBytes = Buffer.alloc(Math.min(size, 3));
    await handle.read(tailBytes, 0, tailBytes.length, size - tailBytes.length);
    const tailText = tailBytes.toString('latin1');
    const tail = TAILS.find((t) => tailText.endsWith(t));
    if (head.toString('latin1') !== HEAD || tail === undefined || size < HEAD.length + tail.length)
      throw new RunLoadError(`${file}: not an inputs.json as tokenload writes it ({"data":[…]})`, file);
    const end = size - tail.length;
    return end === HEAD.length ? null : { start: HEAD.length, end };
  } finally {
    await handle.close();
  }
}

/**
 * Writes the concatenation of `files` (`inputs.json` of each shard, in order) to `out`.
 * @throws {RunLoadError} naming a file that does not have the layout tokenload writes; the system
 *   error of a file that cannot be read or written.
 */
export async function concatInputs(files: readonly string[], out: string): Promise<void> {
  const ranges = [];
  for (const file of files) ranges.push({ file, range: await entriesRange(file) });
  const sink = createWriteStream(out);
  try {
    sink.write(HEAD);
    let first = true;
    for (const { file, range } of ranges) {
      if (range === null) continue;
      if (!first) sink.write(',');
      first = false;
      await pipeline(createReadStream(file, { start: range.start, end: range.end - 1 }), sink, {
        end: false,
      });
    }
    sink.end(']}\n');
    await once(sink, 'finish');
  } finally {
    sink.destroy();
  }
}
