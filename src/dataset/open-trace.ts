/**
 * Opens a trace file for reading, turning every way that can fail (missing, unreadable, a folder)
 * into a {@link DatasetError} naming the file.
 */
import { open } from 'node:fs/promises';
import { DatasetError } from './types.js';

/** An open file handle of a trace. */
export type TraceHandle = Awaited<ReturnType<typeof open>>;

/**
 * Opens `file` read-only.
 * @throws {DatasetError} naming the file when it cannot be opened or is a directory.
 */
export async function openTraceFile(file: string): Promise<TraceHandle> {
  let handle: TraceHandle;
  try {
    handle = await open(file, 'r');
  } catch (err) {
    throw new DatasetError(`${file}: cannot open trace file (${(err as Error).message})`, file);
  }
  const stat = await handle.stat();
  if (!stat.isFile()) {
    await handle.close();
    throw new DatasetError(`${file}: not a regular file (a folder?); give the trace file itself`, file);
  }
  return handle;
}
