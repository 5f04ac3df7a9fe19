/** Temp trace files and the "rejects with a DatasetError" check the loader tests share. */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dataset, LoadOptions } from '../../src/dataset/types.js';
import { DatasetError } from '../../src/dataset/types.js';

/** A writer of numbered temp files `<prefix>N.<ext>` in a fresh folder. */
export function tempFileWriter(prefix: string, ext: string): (text: string) => string {
  const dir = mkdtempSync(join(tmpdir(), `tokenload-${prefix}-`));
  let n = 0;
  return (text) => {
    n += 1;
    const file = join(dir, `${prefix}${n}.${ext}`);
    writeFileSync(file, text);
    return file;
  };
}

/** Asserts that `load(file, options)` rejects with a DatasetError matching `pattern` (and naming `field`). */
export async function assertDatasetError(
  load: (file: string, options?: LoadOptions) => Promise<Dataset>,
  file: string,
  pattern: RegExp,
  field?: string,
  options?: LoadOptions,
): Promise<void> {
  await assert.rejects(load(file, options), (err: unknown) => {
    assert.ok(err instanceof DatasetError, String(err));
    assert.match(err.message, pattern);
    if (field !== undefined) assert.equal(err.field, field);
    return true;
  });
}
