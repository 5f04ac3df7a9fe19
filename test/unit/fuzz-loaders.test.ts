/**
 * Fuzzing, bounded: the Bailian and Mooncake loaders on mutated sample lines written to temp files
 * either load or throw a `DatasetError` naming the file and line. `npm run fuzz` runs longer.
 */
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import fc from 'fast-check';
import { fuzzTempDir, type LoaderKind, loaderProperty } from '../helpers/fuzz-properties.js';

const RUNS = 500;
const TEST_TIMEOUT_MS = 60_000;
const dir = fuzzTempDir();
after(() => rmSync(dir, { recursive: true, force: true }));

for (const kind of ['bailian', 'mooncake'] as LoaderKind[]) {
  test(`${kind} loader: mutated lines load or fail with a DatasetError naming file and line`, {
    timeout: TEST_TIMEOUT_MS,
  }, async () => {
    await fc.assert(loaderProperty(kind, dir).property, { numRuns: RUNS, seed: 20240601 });
  });
}
